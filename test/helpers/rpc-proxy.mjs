// A JSON-RPC proxy in front of anvil, on loopback, for tests and benchmarks: counts the calls by
// method (batches counted call by call) and, when asked, behaves the way hosted RPC providers do:
// - fails a share of requests and delays the rest (some failures after anvil has handled the
//   request: the answer is lost, the nastiest case for a sender of transactions);
// - refuses eth_getLogs over too many blocks or with too many logs, in the providers' own words;
// - answers 429, with or without Retry-After;
// - lags a number of blocks behind the node it fronts (blocks, logs, receipts and state it has not
//   seen yet do not exist for it);
// - answers a block request with another block;
// - refuses some methods (a node that times out on receipts, say) while answering the rest, or only
//   the calls about some transactions;
// - is down (503).
// Faults are set and changed while it runs (`setFaults`); see rpc-proxy.d.mts.
import { createServer } from "node:http";

const hex = (n) => `0x${BigInt(n).toString(16)}`;
const num = (h) => (typeof h === "string" && /^0x[0-9a-f]+$/i.test(h) ? BigInt(h) : null);
const TAGS = new Set(["latest", "pending", "safe", "finalized"]);

/** The refusal of an eth_getLogs over `blocks` blocks when `limit` is allowed, as each provider words it. */
function rangeRefusal(shape, from, blocks, limit) {
  switch (shape) {
    case "alchemy":
      return {
        code: -32602,
        message: `Log response size exceeded. You can make eth_getLogs requests with up to a ${limit} block range and no limit on the response size, or you can make eth_getLogs requests with up to a 10K block range and a cap of 10,000 logs in the response. Based on your parameters, this block range should work: [${hex(from)}, ${hex(from + BigInt(limit) - 1n)}]`,
      };
    case "quicknode":
      return { code: -32614, message: `eth_getLogs is limited to a ${limit} range` };
    case "tenderly":
      return { code: -32602, message: "invalid params", data: { payload: `range ${blocks} is bigger than range limit ${limit}` } };
    default:
      return { code: -32602, message: `range ${blocks} exceeds limit of ${limit}` };
  }
}

/** Starts a proxy to `target`; see rpc-proxy.d.mts. */
export async function startRpcProxy(target, options = {}) {
  const { failRate = 0, maxDelayMs = 0, random = Math.random } = options;
  const counts = new Map();
  const logRanges = [];
  const requestTimes = [];
  let requests = 0;
  let failed = 0;
  let faults = {};
  let rateLimited = 0;

  const upstream = async (payload) => {
    const res = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) });
    return res.json();
  };
  const call = async (method, params) => (await upstream({ jsonrpc: "2.0", id: 1, method, params })).result;

  /** One call as the faulty provider answers it. */
  async function handle(req) {
    const reply = (result) => ({ jsonrpc: "2.0", id: req.id, result });
    const refuse = (error) => ({ jsonrpc: "2.0", id: req.id, error });
    const params = req.params ?? [];
    if (faults.refuseMethods?.includes(req.method)) return refuse({ code: -32000, message: "request timed out" });
    if (typeof params[0] === "string" && faults.refuseTxHashes?.some((h) => h.toLowerCase() === params[0].toLowerCase())) {
      return refuse({ code: -32000, message: "request timed out" });
    }
    const lagged = faults.lagBlocks ? BigInt(await call("eth_blockNumber", [])) - BigInt(faults.lagBlocks) : null;
    const seen = (n) => lagged === null || (n !== null && n <= lagged);

    if (req.method === "eth_getLogs") {
      const filter = { ...params[0] };
      if (lagged !== null) {
        if (filter.blockHash) {
          const block = await call("eth_getBlockByHash", [filter.blockHash, false]);
          if (!block || !seen(num(block.number))) return refuse({ code: -32000, message: "unknown block" });
        } else {
          const to = TAGS.has(filter.toBlock) || filter.toBlock === undefined ? lagged : num(filter.toBlock);
          if (num(filter.fromBlock) !== null && num(filter.fromBlock) > lagged) return reply([]);
          filter.toBlock = hex(to < lagged ? to : lagged);
        }
      }
      const from = num(filter.fromBlock);
      const to = num(filter.toBlock);
      const blocks = from !== null && to !== null ? Number(to - from + 1n) : null;
      const refusedRange = faults.logsRangeLimit && blocks !== null && blocks > faults.logsRangeLimit;
      logRanges.push({ from: Number(from), to: Number(to), blocks, refused: !!refusedRange });
      if (refusedRange) return refuse(rangeRefusal(faults.logsRangeShape, from, blocks, faults.logsRangeLimit));
      const logs = await call("eth_getLogs", [filter]);
      if (faults.maxLogs && logs.length > faults.maxLogs) {
        logRanges[logRanges.length - 1].refused = true;
        return refuse({ code: -32005, message: `query returned more than ${faults.maxLogs} results` });
      }
      return reply(logs);
    }

    if (req.method === "eth_blockNumber" && lagged !== null) return reply(hex(lagged));
    if (req.method === "eth_getBlockByNumber") {
      let n = TAGS.has(params[0]) ? lagged : num(params[0]);
      if (lagged !== null && n !== null && n > lagged) return reply(null);
      if (faults.wrongBlock && n !== null && n > 0n) n -= 1n;
      return reply(await call("eth_getBlockByNumber", [n === null ? params[0] : hex(n), params[1] ?? false]));
    }
    if (lagged !== null && (req.method === "eth_getBlockByHash" || req.method === "eth_getTransactionReceipt" || req.method === "eth_getTransactionByHash")) {
      const result = await call(req.method, params);
      return reply(result && seen(num(result.number ?? result.blockNumber)) ? result : null);
    }
    if (lagged !== null && ["eth_call", "eth_getBalance", "eth_getCode", "eth_getTransactionCount", "eth_estimateGas"].includes(req.method)) {
      const at = params.length - 1;
      const rewritten = [...params];
      if (TAGS.has(rewritten[at])) rewritten[at] = hex(lagged);
      return upstream({ ...req, params: rewritten });
    }
    return upstream(req);
  }

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString();
      requests++;
      requestTimes.push(Date.now());
      let parsed;
      try {
        parsed = JSON.parse(body);
        for (const c of Array.isArray(parsed) ? parsed : [parsed]) counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
      } catch {}
      if (faults.down) return void res.writeHead(503, { "content-type": "text/plain" }).end("unavailable");
      if (rateLimited > 0) {
        rateLimited--;
        const headers = { "content-type": "application/json" };
        if (faults.rateLimit?.retryAfterSeconds !== undefined) headers["retry-after"] = String(faults.rateLimit.retryAfterSeconds);
        return void res.writeHead(429, headers).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: 429, message: "Too Many Requests" } }));
      }
      const roll = random();
      if (roll < failRate * 0.7) {
        failed++;
        return void res.writeHead(503, { "content-type": "text/plain" }).end("unavailable");
      }
      if (maxDelayMs > 0) await new Promise((r) => setTimeout(r, random() * maxDelayMs));
      try {
        const perCall = faults.logsRangeLimit || faults.maxLogs || faults.lagBlocks || faults.wrongBlock || faults.refuseMethods || faults.refuseTxHashes;
        const text = perCall
          ? JSON.stringify(Array.isArray(parsed) ? await Promise.all(parsed.map(handle)) : await handle(parsed))
          : await (await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })).text();
        // The request reached the node, but its answer is lost on the way back.
        if (roll < failRate) {
          failed++;
          return void res.destroy();
        }
        res.writeHead(200, { "content-type": "application/json" }).end(text);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    setFaults(next) {
      faults = { ...next };
      rateLimited = next.rateLimit?.requests ?? 0;
    },
    calls: () => Object.fromEntries(counts),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    requests: () => requests,
    failed: () => failed,
    requestTimes: () => [...requestTimes],
    logRanges: () => [...logRanges],
    reset() {
      counts.clear();
      logRanges.length = 0;
      requestTimes.length = 0;
      requests = 0;
      failed = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
