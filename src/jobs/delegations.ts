// Relayer key rotation for subscriptions. Every permission names the relayer key of its day as the
// one spender allowed to pull, and SubscriptionsV1 gives each such spender one controller: itself,
// or the key it was last delegated to. When the relayer key changes (RELAYER_PRIVATE_KEY /
// CHAIN_<id>_RELAYER_KEY), the controller of every spender still named by a live subscription (and
// of every key in RELAYER_PREVIOUS_KEYS) signs Delegation(spender, current key, nonce), and the
// current relayer sends delegate(): from then on only the current key pulls and revokes for those
// permissions, the old ones have no power left, and no payer signs again. Runs in the process
// holding the chain's lock, after the relayer's open transactions were looked at.
//
// Invariants: an old key never sends a transaction (it needs no gas); at most one delegation is open
// per chain, the next waits until it was mined or failed; each is signed for the contract's current
// nonce of the spender, so a failed or dropped one is signed again, never replayed; permissions are
// delegated on the contract they were signed for (a changed FEE_RECIPIENT moves the contract for new
// subscriptions only).
import { Contract, Wallet } from "ethers";
import type { Logger } from "pino";
import type { Relayer } from "../chain/relayer.js";
import { DELEGATION_TYPES, delegateCalldata, subscriptionsDomain, subscriptionsInterface } from "../chain/subscriptions.js";
import type { Prisma } from "../db/client.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

/**
 * Makes the current relayer the controller of every spender that matters on the chain, one
 * delegate() at a time. Returns true once nothing is left that it can do (a spender whose controller
 * is a key it does not hold is logged as an error: its subscriptions cannot renew until it is listed).
 */
export async function runDelegations(prisma: Prisma, relayer: Relayer, previousKeys: readonly string[], log: Logger): Promise<boolean> {
  const { chain } = relayer;
  const keys = new Map(previousKeys.map((k) => new Wallet(k)).map((w) => [w.address, w]));
  const live = await prisma.subscription.findMany({
    where: { chainId: chain.chainId, status: { notIn: ["CANCELED", "INCOMPLETE_EXPIRED"] }, spender: { not: null }, contractAddress: { not: null } },
    distinct: ["contractAddress", "spender"],
    select: { contractAddress: true, spender: true },
  });
  const pairs = new Map<string, { contract: string; spender: string }>();
  for (const spender of keys.keys()) pairs.set(`${chain.subscriptions}:${spender}`, { contract: chain.subscriptions, spender });
  for (const s of live) pairs.set(`${s.contractAddress}:${s.spender}`, { contract: s.contractAddress!, spender: s.spender! });
  const todo = [...pairs.values()].filter((p) => p.spender !== relayer.address);
  if (todo.length === 0) return true;
  const open = await prisma.relayerTransaction.count({ where: { chainId: chain.chainId, kind: "DELEGATE", status: { in: ["SENT", "MINED"] } } });
  if (open > 0) return false;
  for (const { contract: address, spender } of todo) {
    // Without the contract there is nothing to delegate yet: asked again on the next tick.
    if ((await relayer.provider.getCode(address)) === "0x") return false;
    const contract = new Contract(address, subscriptionsInterface, relayer.provider);
    const controller = (await contract.getFunction("controllerOf")(spender)) as string;
    if (controller === relayer.address) continue;
    const signer = keys.get(controller);
    if (!signer) {
      log.error(
        { chainId: chain.chainId, contract: address, spender, controller },
        "subscription permissions naming this spender are controlled by a key that is neither the relayer nor in RELAYER_PREVIOUS_KEYS: their renewals fail until that key is listed",
      );
      continue;
    }
    const nonce = (await contract.getFunction("delegationNonce")(spender)) as bigint;
    const signature = await signer.signTypedData(subscriptionsDomain(chain.chainId, address), DELEGATION_TYPES, { spender, delegate: relayer.address, nonce });
    const id = await sendRelayerTx(prisma, relayer, "DELEGATE", { to: address, data: delegateCalldata(spender, relayer.address, signature) }, async () => true);
    log.info({ tx: id, spender, controller, relayer: relayer.address }, "delegating an old relayer key's subscription permissions to the current key");
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
