// Relays the EIP-3009 authorizations the service accepted (domain/authorizations.ts): buyers' payments
// without gas, refunds the settlement wallet signed, and x402 payments handed to settle (domain/x402/). In the process that holds the chain's relayer,
// each one waiting is simulated again and, if the token would take it and what it pays still waits for
// it, sent as a relayer transaction of kind AUTHORIZATION (stored before it is broadcast, fee bumps and
// nonce order as for every other). The money then shows as a transfer the indexer reads. A relay that
// fails keeps why; the authorization stays money on its way until the chain spends its nonce or its
// validBefore passes, whoever sends it. Every change of state is the domain's (domain/authorization-relay.ts).
import { isError } from "ethers";
import type { Logger } from "pino";
import { type TransferAuthorization, transferWithAuthorizationCall } from "../chain/authorizations.js";
import type { Relayer } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";
import { markFailed, markMined, markRelayFailed, markSent, payeeGone, waitingAuthorizations } from "../domain/authorization-relay.js";
import { transferOf } from "../domain/authorizations.js";
import { markX402Failed, markX402RelayFailed, markX402Sent, markX402Settled, waitingX402Payments } from "../domain/x402/relay.js";
import type { RelayerTxClaim } from "../domain/relayer-transactions.js";
import { sendRelayerTx, type TxHandlers } from "./relayer-txs.js";

/** Sends the accepted authorizations and x402 payments waiting on the relayer's chain, oldest first. */
export async function runAuthorizations(prisma: Prisma, relayer: Relayer, logger: Logger): Promise<void> {
  const relays: Relay[] = [];
  for (const authorization of await waitingAuthorizations(prisma, relayer.chain.chainId)) {
    const gone = payeeGone(authorization);
    if (gone) await markFailed(prisma, authorization.id, gone);
    else {
      const claim: RelayerTxClaim = (tx, txId) => markSent(tx, authorization, txId);
      relays.push({ id: authorization.id, purpose: authorization.purpose, transfer: transferOf(authorization), fail: markFailed, claim });
    }
  }
  for (const payment of await waitingX402Payments(prisma, relayer.chain.chainId)) {
    const claim: RelayerTxClaim = (tx, txId) => markX402Sent(tx, payment.id, txId);
    relays.push({ id: payment.id, purpose: "X402", transfer: transferOf(payment), fail: markX402Failed, claim });
  }
  // Simulated all at once (each one an RPC round trip, and a settle answer waits on them), sent in order.
  const simulations = relays.map((r) => simulate(relayer, r.transfer));
  for (const [i, relay] of relays.entries()) await relayAuthorization(prisma, relayer, logger, relay, await simulations[i]!);
}

/** What is relayed, as the one relay step sees it: how it fails before it is sent, and how it is claimed by its transaction. */
interface Relay {
  id: string;
  purpose: string;
  transfer: TransferAuthorization;
  fail: (prisma: Prisma, id: string, error: string) => Promise<void>;
  claim: RelayerTxClaim;
}

/** What the simulation said: the gas to send with, why the token refuses it, or neither (the node did not answer: try again next tick). */
interface Simulation {
  gasNeeded: bigint;
  refusal: string | null;
  unanswered?: string;
}

/**
 * Whether the token would take `transfer` from the relayer now, and the gas it needs. The relayer
 * never pays for a transaction that would revert (expired, or the nonce used or cancelled meanwhile).
 * The token reverts on any failure, swallowing none, so the gas the simulation needed (the estimate)
 * is what it is sent with, plus headroom. Only a revert is a refusal: a node that fails to answer
 * leaves the authorization waiting.
 */
function simulate(relayer: Relayer, transfer: TransferAuthorization): Promise<Simulation> {
  const call = transferWithAuthorizationCall(relayer.chain.usdc, transfer);
  return relayer.provider.estimateGas({ ...call, from: relayer.address }).then(
    (gasNeeded) => ({ gasNeeded, refusal: null }),
    (e: Error & { shortMessage?: string }) => {
      const why = e.shortMessage ?? e.message;
      return isError(e, "CALL_EXCEPTION") ? { gasNeeded: 0n, refusal: why } : { gasNeeded: 0n, refusal: null, unanswered: why };
    },
  );
}

/** The one relay step of every kind: send what the token takes, fail what it refuses. */
async function relayAuthorization(
  prisma: Prisma,
  relayer: Relayer,
  logger: Logger,
  relay: Relay,
  { gasNeeded, refusal, unanswered }: Simulation,
): Promise<void> {
  const call = transferWithAuthorizationCall(relayer.chain.usdc, relay.transfer);
  if (unanswered !== undefined) {
    logger.warn({ authorization: relay.id, err: unanswered }, "simulating an authorization failed; trying again next tick");
    return;
  }
  const log = { authorization: relay.id, purpose: relay.purpose };
  if (refusal !== null) {
    await relay.fail(prisma, relay.id, `the token refuses it now: ${refusal}`);
    logger.warn({ ...log, refusal }, "authorization not relayed");
    return;
  }
  const sent = await sendRelayerTx(prisma, relayer, "AUTHORIZATION", call, relay.claim, { gasNeeded });
  if (sent) logger.info({ ...log, relayerTx: sent }, "authorization relayed");
}

/** What an AUTHORIZATION relayer transaction's end does to the authorization or x402 payment it carries (and the day's gas). */
export function authorizationHandlers(prisma: Prisma, logger: Logger): TxHandlers {
  return {
    async mined(tx, receipt) {
      await markMined(prisma, tx.id, receipt.gasUsed);
      await markX402Settled(prisma, tx.id, receipt.hash, receipt.gasUsed);
    },
    async confirmed() {},
    async failed(tx, receipt) {
      const why = receipt ? "its transaction reverted" : "its transaction was dropped";
      await markRelayFailed(prisma, tx.id, why, receipt?.gasUsed ?? null);
      await markX402RelayFailed(prisma, tx.id, why, receipt?.gasUsed ?? null);
      logger.warn({ relayerTx: tx.id, why }, "relayed authorization failed; it stays money on its way until the chain spends it or it expires");
    },
  };
}
