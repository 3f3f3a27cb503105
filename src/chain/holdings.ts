// What an address holds of a token (an ERC-20, or the chain's native coin), for sweeps: what one would
// move, and what one that moved nothing saw.
//
// Invariants:
// - a token whose balanceOf reverts or answers garbage (CALL_EXCEPTION, BAD_DATA) is UNREADABLE_BALANCE:
//   that is the token's verdict; transport trouble is no verdict and throws;
// - a read at a past block that fails (a node that keeps only recent state refuses it) is read again at
//   the latest block: a handler that reacts to a receipt must not stop, or misjudge the token, on it.
import { type BlockTag, Interface, isError, type Provider } from "ethers";

/** The balance kept for a token that will not tell an address's balance (its balanceOf reverts). */
export const UNREADABLE_BALANCE = -1n;

const erc20 = new Interface(["function balanceOf(address) view returns (uint256)"]);

/**
 * `holder`'s balance of `asset` ("native" or an ERC-20 address) at `blockTag`, or now: at the latest
 * block when unset, or when the read at `blockTag` fails in any way (a pruned node answers eth_call
 * with an error ethers takes for a revert, so only the latest block's answer is the token's verdict).
 */
export async function holding(provider: Provider, asset: string, holder: string, blockTag?: BlockTag): Promise<bigint> {
  if (blockTag !== undefined && blockTag !== "latest") {
    try {
      return await rawHolding(provider, asset, holder, blockTag);
    } catch {
      // Read again now (below): a token that really refuses refuses there too.
    }
  }
  try {
    return await rawHolding(provider, asset, holder, "latest");
  } catch (e) {
    if (!isError(e, "CALL_EXCEPTION") && !isError(e, "BAD_DATA")) throw e;
    return UNREADABLE_BALANCE;
  }
}

async function rawHolding(provider: Provider, asset: string, holder: string, blockTag: BlockTag): Promise<bigint> {
  if (asset === "native") return provider.getBalance(holder, blockTag);
  const data = await provider.call({ to: asset, data: erc20.encodeFunctionData("balanceOf", [holder]), blockTag });
  return erc20.decodeFunctionResult("balanceOf", data)[0] as bigint;
}
