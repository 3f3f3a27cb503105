// The chain's logs as the indexer, its reorg re-checks and the reconciliation read them: USDC's
// Transfer, AuthorizationUsed and AuthorizationCanceled events and SubscriptionsV1's Pulled and
// Revoked, parsed into the facts domain/chain-transfers.ts and domain/subscription-facts.ts record.
import { type Block, getAddress, id, type Log, type TransactionReceipt } from "ethers";
import type { ChainBlockFacts } from "../domain/chain-cursors.js";
import { factKeys, type SeenAuthorizationUse, type SeenTransfer } from "../domain/chain-transfers.js";
import { PULLED_TOPIC, pullFactsOf, REVOKED_TOPIC } from "../domain/subscription-facts.js";
import type { Relocation } from "../domain/reversals.js";

/** USDC's Transfer event. */
export const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");
const AUTHORIZATION_USED_TOPIC = id("AuthorizationUsed(address,bytes32)");
/** USDC's AuthorizationCanceled: the signer spent the nonce on nothing (cancelAuthorization). */
const AUTHORIZATION_CANCELED_TOPIC = id("AuthorizationCanceled(address,bytes32)");

/** The events one eth_getLogs of the indexer asks for, of USDC and SubscriptionsV1 both. */
export const INDEXED_TOPICS = [TRANSFER_TOPIC, AUTHORIZATION_USED_TOPIC, AUTHORIZATION_CANCELED_TOPIC, PULLED_TOPIC, REVOKED_TOPIC];

/** A node's block header as the indexer keeps it: its number a bigint from here on. */
export function blockFacts(b: Block): ChainBlockFacts {
  return { number: BigInt(b.number), hash: b.hash!, parentHash: b.parentHash, timestamp: new Date(b.timestamp * 1000) };
}

/** The USDC transfers and subscription pulls (`subscriptions`: SubscriptionsV1's address) of a receipt by fact key, with where each sits now. */
export function factsOf(receipt: TransactionReceipt, usdc: string, subscriptions?: string): Map<string, { at: (id: string) => Relocation }> {
  const logs = receipt.logs.filter((l) => sameAddress(l.address, usdc));
  const { transfers } = parseLogs(logs as unknown as Log[]);
  const keys = factKeys(transfers);
  const facts = new Map(
    transfers.map((t, i) => [keys[i]!, { at: (id: string) => ({ id, blockNumber: t.blockNumber, blockHash: t.blockHash, logIndex: t.logIndex }) }]),
  );
  const pulled = subscriptions ? pullFactsOf(receipt.logs.filter((l) => sameAddress(l.address, subscriptions)) as unknown as Log[]) : [];
  for (const { key, log } of pulled)
    facts.set(key, { at: (id: string) => ({ id, blockNumber: log.blockNumber, blockHash: log.blockHash, logIndex: log.logIndex }) });
  return facts;
}

/** Whether two addresses are the same, whatever their case. */
export const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * A range's well-formed USDC logs, in log order: the non-zero Transfers (parties checksummed), the
 * AuthorizationUsed events (whose nonce was spent) and the AuthorizationCanceled ones (whose nonce
 * its signer cancelled). Block times are filled in by the caller.
 */
export function parseLogs(logs: readonly Log[]): { transfers: SeenTransfer[]; uses: SeenAuthorizationUse[]; cancels: SeenAuthorizationUse[] } {
  const ordered = [...logs].sort((a, b) => a.blockNumber - b.blockNumber || a.index - b.index);
  const transfers = ordered
    .filter((l) => l.topics[0] === TRANSFER_TOPIC && l.topics.length === 3 && l.data.length === 66 && BigInt(l.data) > 0n)
    .map((l) => ({
      txHash: l.transactionHash,
      logIndex: l.index,
      blockNumber: BigInt(l.blockNumber),
      blockHash: l.blockHash,
      blockTime: null,
      from: topicAddress(l.topics[1]!),
      to: topicAddress(l.topics[2]!),
      amount: BigInt(l.data),
    }));
  const nonceEvents = (topic: string) =>
    ordered
      .filter((l) => l.topics[0] === topic && l.topics.length === 3)
      .map((l) => ({
        txHash: l.transactionHash,
        blockNumber: BigInt(l.blockNumber),
        authorizer: topicAddress(l.topics[1]!),
        nonce: l.topics[2]!.toLowerCase(),
      }));
  return { transfers, uses: nonceEvents(AUTHORIZATION_USED_TOPIC), cancels: nonceEvents(AUTHORIZATION_CANCELED_TOPIC) };
}

function topicAddress(topic: string): string {
  return getAddress(`0x${topic.slice(26)}`);
}
