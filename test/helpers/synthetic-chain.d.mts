/** A log the synthetic chain holds. */
export interface SyntheticLog {
  blockNumber: number;
  address: string;
  topics: string[];
  data: string;
  transactionHash?: string;
  logIndex?: number;
}

/** A running synthetic chain node. */
export interface SyntheticChain {
  url: string;
  /** The hash of block `n` (fixed). */
  hash(n: number): string;
  /** Adds logs to blocks (of the past or the future: a log shows once its block is below the head). */
  addLogs(logs: SyntheticLog[]): void;
  /** Moves the chain's head (new blocks appear; none ever changes). */
  setHead(n: number): void;
  close(): Promise<void>;
}

/** Starts a JSON-RPC node serving blocks 0..head of a synthetic chain on 127.0.0.1. */
export function startSyntheticChain(options: { chainId: number; head: number; blockTimeSeconds?: number; logs?: SyntheticLog[] }): Promise<SyntheticChain>;
