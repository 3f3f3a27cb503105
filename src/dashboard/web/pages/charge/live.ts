// What the charge page's sections share: the chains it names, and the newest of the answers that
// carry a section's fragment (the page's query, the live stream, a mutation's result, a section read
// again after an event), so that a late answer never hides a newer one.
import { useRef } from "preact/hooks";

/** A chain as the charge page shows it: its name, explorer and USDC contract. */
export interface ChainInfo {
  chainId: number;
  name: string;
  explorerUrl: string | null;
  usdcAddress: string;
}

/** The chain `chainId` among those the service runs, if it is one. */
export function chainOf(chains: readonly ChainInfo[], chainId: number | null | undefined): ChainInfo | undefined {
  return chains.find((c) => c.chainId === chainId);
}

/** A chain's name, or "chain <id>" for one the service does not run. */
export function chainName(chains: readonly ChainInfo[], chainId: number): string {
  return chainOf(chains, chainId)?.name ?? `chain ${chainId}`;
}

/**
 * The value among `values` that changed last (by identity; on a tie the later argument): each is
 * the same fragment's data from another answer, and the one that arrived last is the newest.
 */
export function useNewest<T>(...values: (T | null | undefined)[]): T | undefined {
  const seen = useRef<(T | null | undefined)[]>([]);
  const newest = useRef<T | undefined>(undefined);
  values.forEach((v, i) => {
    if (v != null && v !== seen.current[i]) newest.current = v;
  });
  seen.current = values;
  return newest.current;
}
