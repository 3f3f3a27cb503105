/** A running JSON-RPC proxy. */
export interface RpcProxy {
  url: string;
  /** Calls seen per JSON-RPC method since the last reset. */
  calls(): Record<string, number>;
  /** All calls seen since the last reset. */
  total(): number;
  /** HTTP requests seen since the last reset (a batch is one). */
  requests(): number;
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
