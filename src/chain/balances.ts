// Reading many balances at one block: ERC-20 `balanceOf` and native balances of many addresses, 500 to
// a call through Multicall3 where the chain has it (registry), else as batched eth_calls. What the
// reconciliation compares the ledger with.
import { Interface, isError } from "ethers";
import { Multicall3Artifact } from "./artifacts.js";
import { MULTICALL3 } from "./clones.js";
import { type ChainRpc, withRpcRetry } from "./rpc.js";

/** One balance to read: of `holder`, in `token` (an ERC-20 address, or "native"). */
export interface BalanceQuery {
  token: string;
  holder: string;
}

const multicall = new Interface(Multicall3Artifact.abi);
const erc20 = new Interface(["function balanceOf(address) view returns (uint256)"]);
/** Calls per Multicall3 call: well within any node's eth_call gas cap. */
const PER_CALL = 500;

/** How many RPC requests a read made (the reconciliation reports it). */
export interface ReadCount {
  requests: number;
}

/**
 * The balances of `queries` at `block`, in order; null for one the token would not tell (a call that
 * reverts). `count.requests` grows by the JSON-RPC requests made.
 */
export async function readBalances(
  rpc: ChainRpc,
  queries: readonly BalanceQuery[],
  block: bigint,
  useMulticall: boolean,
  count: ReadCount = { requests: 0 },
): Promise<(bigint | null)[]> {
  const out: (bigint | null)[] = [];
  for (let i = 0; i < queries.length; i += PER_CALL) {
    const chunk = queries.slice(i, i + PER_CALL);
    out.push(...(useMulticall ? await viaMulticall(rpc, chunk, block, count) : await viaCalls(rpc, chunk, block, count)));
  }
  return out;
}

async function viaMulticall(rpc: ChainRpc, queries: readonly BalanceQuery[], block: bigint, count: ReadCount): Promise<(bigint | null)[]> {
  count.requests++;
  const data = await withRpcRetry(() => rpc.call({ to: MULTICALL3, data: encodeAggregate3(queries), blockTag: block }));
  return decodeAggregate3(data, queries.length);
}

const AGGREGATE3 = multicall.getFunction("aggregate3")!.selector;
const GET_ETH_BALANCE = multicall.getFunction("getEthBalance")!.selector.slice(2);
const BALANCE_OF = erc20.getFunction("balanceOf")!.selector.slice(2);
const word = (n: number) => n.toString(16).padStart(64, "0");
const addressWord = (a: string) => a.slice(2).toLowerCase().padStart(64, "0");

/**
 * `aggregate3` of one balance read per query (allowFailure true), ABI-encoded by hand: every call has
 * the same shape, so this is string work, where the generic encoder takes a tenth of a second per 500
 * reads on the worker's event loop.
 */
export function encodeAggregate3(queries: readonly BalanceQuery[]): string {
  // Each Call3 tuple: target, allowFailure, the offset of callData (3 words), its length (36 bytes),
  // then the 4-byte selector and the holder's word, padded to 64 bytes.
  const TUPLE_BYTES = 6 * 32;
  const parts: string[] = [AGGREGATE3, word(0x20), word(queries.length)];
  for (let i = 0; i < queries.length; i++) parts.push(word(queries.length * 32 + i * TUPLE_BYTES));
  for (const q of queries) {
    const native = q.token === "native";
    parts.push(addressWord(native ? MULTICALL3 : q.token), word(1), word(0x60), word(36));
    parts.push(`${native ? GET_ETH_BALANCE : BALANCE_OF}${addressWord(q.holder)}`.padEnd(128, "0"));
  }
  return parts.join("");
}

/**
 * The balances in an `aggregate3` answer of `n` results (`(bool success, bytes returnData)[]`): each
 * a uint256, or null where the call failed or did not answer one word.
 */
export function decodeAggregate3(data: string, n: number): (bigint | null)[] {
  const hex = data.startsWith("0x") ? data.slice(2) : data;
  const at = (byte: number) => Number.parseInt(hex.slice(byte * 2, byte * 2 + 64), 16);
  const array = at(0);
  if (at(array) !== n) throw new Error(`aggregate3 answered ${at(array)} results for ${n} calls`);
  const base = array + 32;
  const out: (bigint | null)[] = [];
  for (let i = 0; i < n; i++) {
    const tuple = base + at(base + i * 32);
    const success = at(tuple) === 1;
    const bytes = tuple + at(tuple + 32);
    const length = at(bytes);
    out.push(success && length === 32 ? BigInt(`0x${hex.slice((bytes + 32) * 2, (bytes + 64) * 2)}`) : null);
  }
  return out;
}

async function viaCalls(rpc: ChainRpc, queries: readonly BalanceQuery[], block: bigint, count: ReadCount): Promise<(bigint | null)[]> {
  count.requests += queries.length;
  return withRpcRetry(() =>
    Promise.all(
      queries.map(async (q) => {
        if (q.token === "native") return rpc.getBalance(q.holder, block);
        try {
          const out = await rpc.call({ to: q.token, data: erc20.encodeFunctionData("balanceOf", [q.holder]), blockTag: block });
          return out.length === 66 ? BigInt(out) : null;
        } catch (e) {
          // A token that will not tell is an answer; transport trouble is not.
          if (isError(e, "CALL_EXCEPTION") || isError(e, "BAD_DATA")) return null;
          throw e;
        }
      }),
    ),
  );
}
