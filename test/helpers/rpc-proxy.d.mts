/** How the proxy misbehaves, like a hosted RPC provider; every field is off unless set. */
export interface RpcFaults {
  /** eth_getLogs over more blocks than this is refused… */
  logsRangeLimit?: number;
  /** …in this provider's words (default "infura": "range N exceeds limit of L"). */
  logsRangeShape?: "infura" | "alchemy" | "quicknode" | "tenderly";
  /** eth_getLogs that would return more logs than this is refused (-32005 "query returned more than N results"). */
  maxLogs?: number;
  /** The next `requests` HTTP requests get 429, with Retry-After: `retryAfterSeconds` when given. */
  rateLimit?: { requests: number; retryAfterSeconds?: number };
  /** The proxy's node is this many blocks behind the real one. */
  lagBlocks?: number;
  /** eth_getBlockByNumber(n) is answered with block n − 1. */
  wrongBlock?: boolean;
  /** Calls of these methods are refused with a transient node error (-32000 "request timed out"); the others are answered. */
  refuseMethods?: string[];
  /** Calls whose first parameter is one of these transaction hashes (receipts, transactions) are refused the same way. */
  refuseTxHashes?: string[];
  /** Every request gets 503. */
  down?: boolean;
}

/** An eth_getLogs the proxy saw. */
export interface LogRange {
  from: number;
  to: number;
  blocks: number | null;
  refused: boolean;
}

/** A running JSON-RPC proxy. */
export interface RpcProxy {
  url: string;
  /** Replaces the faults in force. */
  setFaults(faults: RpcFaults): void;
  /** Calls seen per JSON-RPC method since the last reset. */
  calls(): Record<string, number>;
  /** All calls seen since the last reset. */
  total(): number;
  /** HTTP requests seen since the last reset (a batch is one). */
  requests(): number;
  /** HTTP requests failed on purpose (failRate) since the last reset. */
  failed(): number;
  /** When each HTTP request arrived (epoch ms) since the last reset. */
  requestTimes(): number[];
  /** Every eth_getLogs range seen since the last reset. */
  logRanges(): LogRange[];
  reset(): void;
  close(): Promise<void>;
}

export interface RpcProxyOptions {
  /** Share of requests that fail (503 before reaching the node, or the answer dropped after). */
  failRate?: number;
  /** Each request that gets through waits up to this long first. */
  maxDelayMs?: number;
  random?: () => number;
}

/** Starts a proxy to the JSON-RPC endpoint `target` on 127.0.0.1. */
export function startRpcProxy(target: string, options?: RpcProxyOptions): Promise<RpcProxy>;
