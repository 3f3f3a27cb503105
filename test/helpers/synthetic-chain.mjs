// A JSON-RPC node that serves a long synthetic chain: block n has a fixed hash derived from n and
// its parent's hash, empty bodies, timestamps `blockTimeSeconds` apart, and the logs it is given.
// For what anvil cannot do in a test's time: a chain tens of thousands of blocks long (anvil mines
// blocks in time that grows with the chain). It answers what the indexer asks (eth_chainId,
// eth_blockNumber, eth_getBlockByNumber, eth_getLogs with range, address and topic filters), on
// 127.0.0.1; see synthetic-chain.d.mts.
import { createServer } from "node:http";
import { id, toQuantity, zeroPadValue } from "ethers";

const ZERO_HASH = `0x${"00".repeat(32)}`;

/** Starts the node; `head` can be moved later with `setHead`. */
export async function startSyntheticChain({ chainId, head, blockTimeSeconds = 2, logs = [] }) {
  let tip = head;
  const genesis = Math.floor(Date.now() / 1000) - head * blockTimeSeconds;
  const hash = (n) => id(`synthetic-block-${n}`);
  const block = (n) => ({
    number: toQuantity(n),
    hash: hash(n),
    parentHash: n === 0 ? ZERO_HASH : hash(n - 1),
    timestamp: toQuantity(genesis + n * blockTimeSeconds),
    nonce: "0x0000000000000000",
    difficulty: "0x0",
    gasLimit: toQuantity(30_000_000),
    gasUsed: "0x0",
    miner: zeroPadValue("0x", 20),
    extraData: "0x",
    baseFeePerGas: "0x1",
    transactions: [],
  });
  const stored = [];
  const addLogs = (more) => {
    for (const l of more) {
      const i = stored.length;
      stored.push({
        address: l.address,
        topics: l.topics,
        data: l.data,
        blockNumber: toQuantity(l.blockNumber),
        blockHash: hash(l.blockNumber),
        transactionHash: l.transactionHash ?? id(`synthetic-tx-${i}`),
        transactionIndex: "0x0",
        logIndex: toQuantity(l.logIndex ?? i),
        removed: false,
      });
    }
  };
  addLogs(logs);
  const matches = (log, filter) => {
    const n = Number(log.blockNumber);
    if (n < Number(filter.fromBlock) || n > Math.min(Number(filter.toBlock), tip)) return false;
    const addresses = filter.address === undefined ? null : [filter.address].flat().map((a) => a.toLowerCase());
    if (addresses && !addresses.includes(log.address.toLowerCase())) return false;
    return (filter.topics ?? []).every((t, i) => t === null || [t].flat().some((x) => x.toLowerCase() === log.topics[i]?.toLowerCase()));
  };
  const answer = (req) => {
    const result = (value) => ({ jsonrpc: "2.0", id: req.id, result: value });
    const [p0] = req.params ?? [];
    switch (req.method) {
      case "eth_chainId":
        return result(toQuantity(chainId));
      case "eth_blockNumber":
        return result(toQuantity(tip));
      case "eth_getBlockByNumber": {
        const n = p0 === "latest" ? tip : Number(p0);
        return result(n <= tip ? block(n) : null);
      }
      case "eth_getLogs":
        return result(stored.filter((l) => matches(l, p0)));
      default:
        return { jsonrpc: "2.0", id: req.id, error: { code: -32601, message: `the method ${req.method} does not exist` } };
    }
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    hash,
    addLogs,
    setHead(n) {
      tip = n;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
