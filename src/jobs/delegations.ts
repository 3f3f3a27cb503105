// Relayer key rotation for subscriptions. Every permission names the relayer key of its day as the
// one spender allowed to pull. When the key changes (RELAYER_PRIVATE_KEY / CHAIN_<id>_RELAYER_KEY),
// the keys listed in RELAYER_PREVIOUS_KEYS sign SubscriptionsV1's Delegation(spender, delegate, nonce)
// naming the current key, and the current relayer sends delegate(): from then on it pulls and revokes
// for every permission naming an old key, and no payer signs again. Runs in the process holding the
// chain's lock, after the relayer's open transactions were looked at.
//
// Invariants: an old key never sends a transaction (it needs no gas); at most one delegation is open
// per chain, the next waits until it was mined or failed; each is signed for the contract's current
// nonce of the old key, so a failed or dropped one is signed again, never replayed; a key that is
// the chain's current relayer is left alone.
import { Contract, Wallet } from "ethers";
import type { Logger } from "pino";
import type { Relayer } from "../chain/relayer.js";
import { DELEGATION_TYPES, delegateCalldata, subscriptionsDeployed, subscriptionsDomain, subscriptionsInterface } from "../chain/subscriptions.js";
import type { Prisma } from "../db/client.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

/**
 * Makes `delegateOf(old) == relayer` on the chain for each of `previousKeys`, one delegate() at a time.
 * Returns true once every old key is delegated (nothing left to do while the keys stay the same).
 */
export async function runDelegations(prisma: Prisma, relayer: Relayer, previousKeys: readonly string[], log: Logger): Promise<boolean> {
  const olds = previousKeys.map((k) => new Wallet(k)).filter((w) => w.address !== relayer.address);
  if (olds.length === 0) return true;
  const { chain } = relayer;
  // Without the contract there is nothing to delegate yet: asked again on the next tick.
  if (!(await subscriptionsDeployed(relayer.provider, chain))) return false;
  const open = await prisma.relayerTransaction.count({ where: { chainId: chain.chainId, kind: "DELEGATE", status: { in: ["SENT", "MINED"] } } });
  if (open > 0) return false;
  const contract = new Contract(chain.subscriptions, subscriptionsInterface, relayer.provider);
  for (const old of olds) {
    if ((await contract.getFunction("delegateOf")(old.address)) === relayer.address) continue;
    const nonce = (await contract.getFunction("delegationNonce")(old.address)) as bigint;
    const signature = await old.signTypedData(subscriptionsDomain(chain.chainId, chain.subscriptions), DELEGATION_TYPES, {
      spender: old.address,
      delegate: relayer.address,
      nonce,
    });
    const call = { to: chain.subscriptions, data: delegateCalldata(old.address, relayer.address, signature) };
    const id = await sendRelayerTx(prisma, relayer, "DELEGATE", call, async () => true);
    log.info({ tx: id, previousKey: old.address, relayer: relayer.address }, "delegating an old relayer key's subscription permissions to the current key");
    return false;
  }
  return true;
}

/** What a delegation's transaction does when it ends: the next run reads the chain again, so only the operator is told. */
export function delegationHandlers(logger: Logger): TxHandlers {
  return {
    async mined() {},
    async confirmed(tx) {
      logger.info({ tx: tx.id }, "old relayer key delegated: the current key pulls and revokes for its subscription permissions");
    },
    async failed(tx) {
      logger.warn({ tx: tx.id }, "delegation of an old relayer key failed; it is signed again on the next tick");
    },
  };
}
