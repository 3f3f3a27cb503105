// A JSON-RPC proxy in front of anvil, on loopback, for tests and benchmarks: counts the calls by
// method (batches counted call by call) and, when asked, fails a share of requests and delays the
// rest, the way a flaky hosted RPC endpoint does. Some failures happen after anvil has handled the
// request (the answer is lost), the nastiest case for a sender of transactions.
import { createServer } from "node:http";

/** Starts a proxy to `target`; see rpc-proxy.d.mts. */
export async function startRpcProxy(target, options = {}) {
  const { failRate = 0, maxDelayMs = 0, random = Math.random } = options;
  const counts = new Map();
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString();
      requests++;
      try {
        const parsed = JSON.parse(body);
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
      } catch {}
      const roll = random();
      if (roll < failRate * 0.7) return void res.writeHead(503, { "content-type": "text/plain" }).end("unavailable");
      if (maxDelayMs > 0) await new Promise((r) => setTimeout(r, random() * maxDelayMs));
      try {
        const upstream = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
        const text = await upstream.text();
        // The request reached the node, but its answer is lost on the way back.
        if (roll < failRate) return void res.destroy();
        res.writeHead(upstream.status, { "content-type": "application/json" }).end(text);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => Object.fromEntries(counts),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    requests: () => requests,
    reset() {
      counts.clear();
      requests = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
