// Deploys the clones of charges whose chain was picked. Each charge has one job row; the worker
// moves it PENDING → SENT → MINED. Invariants, whatever crashes where:
// - a job is worked on by one worker at a time (SKIP LOCKED claim plus a lease);
// - before sending anything the chain is asked whether the clone already has code;
// - a transaction is signed and stored (SENT) before it is broadcast, and a SENT job re-sends that
//   same transaction (same nonce), so a crash between "sent" and "recorded" cannot make a second;
// - one left unmined too long is replaced at its nonce with higher fees (stored first, like the
//   original), so a deployment never holds up the relayer's later transactions for long.
// Even a second deploy transaction could not create a second contract: CREATE2 to an existing
// address fails. These rules keep it from being sent (and paid for) at all.
import { Interface } from "ethers";
import type { Logger } from "pino";
import { ChargeFactoryArtifact } from "../chain/artifacts.js";
import { cloneSalt } from "../chain/clones.js";
import { isTransientRpcError, type Relayer, type SignedTx } from "../chain/relayer.js";
import type { Prisma } from "../db/client.js";

const factoryAbi = new Interface(ChargeFactoryArtifact.abi);
/** How long a claimed job is left alone by other workers. */
const LEASE_SECONDS = 60;
const BATCH = 20;

interface ClaimedJob {
  chargeId: string;
  status: "PENDING" | "SENT" | "MINED";
  attempts: number;
  rawTx: string | null;
  txHash: string | null;
  sentAt: Date | null;
  cloneAddress: string;
  wallet: string;
  feeBps: number;
}

export interface DeploymentOptions {
  /** How long a sent deployment may stay unmined before it is replaced with higher fees (RELAYER_BUMP_AFTER_MS). */
  bumpAfterMs: number;
}

/** Works through the due deployment jobs of `relayer`'s chain once; returns how many were handled. */
export async function runDeployments(prisma: Prisma, relayer: Relayer, logger: Logger, { bumpAfterMs }: DeploymentOptions): Promise<number> {
  const chainId = relayer.chain.chainId;
  const jobs = await prisma.$queryRaw<ClaimedJob[]>`
    UPDATE clone_deployments d SET next_attempt_at = now() + make_interval(secs => ${LEASE_SECONDS}), attempts = d.attempts + 1, updated_at = now()
    FROM charges c
    WHERE c.id = d.charge_id AND d.charge_id IN (
      SELECT charge_id FROM clone_deployments
      WHERE chain_id = ${chainId} AND status <> 'MINED' AND next_attempt_at <= now()
      -- Sent ones first: marking a mined clone deployed (so it can be flushed) must not wait behind a backlog of new ones.
      ORDER BY status = 'SENT' DESC, next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
    RETURNING d.charge_id AS "chargeId", d.status::text AS status, d.attempts, d.raw_tx AS "rawTx", d.tx_hash AS "txHash", d.sent_at AS "sentAt",
      c.clone_address AS "cloneAddress", c.settlement_wallet AS wallet, c.fee_bps AS "feeBps"`;
  for (const job of jobs) {
    try {
      await advance(prisma, relayer, job, bumpAfterMs, logger);
    } catch (e) {
      const message = (e as Error).message.slice(0, 500);
      logger.warn({ chargeId: job.chargeId, chainId, attempts: job.attempts, err: message }, "clone deployment attempt failed");
      // A flaky node is tried again soon; anything else backs off: 5 s, 10 s, 20 s … up to 10 min.
      const delay = isTransientRpcError(e) ? 1 : Math.min(600, 5 * 2 ** Math.min(job.attempts - 1, 7));
      await prisma.cloneDeployment.update({
        where: { chargeId: job.chargeId },
        data: { lastError: message, nextAttemptAt: new Date(Date.now() + delay * 1000) },
      });
    }
  }
  return jobs.length;
}

async function advance(prisma: Prisma, relayer: Relayer, job: ClaimedJob, bumpAfterMs: number, logger: Logger): Promise<void> {
  if ((await relayer.provider.getCode(job.cloneAddress)) !== "0x") return markMined(prisma, job);

  if (job.status === "SENT" && job.rawTx && job.txHash) {
    const receipt = await relayer.provider.getTransactionReceipt(job.txHash);
    if (receipt?.status === 1) return markMined(prisma, job);
    if (!receipt) {
      if (job.sentAt && Date.now() - job.sentAt.getTime() >= bumpAfterMs) {
        // Whichever version is mined deploys the clone (the code check above sees it); if the old
        // one took the nonce meanwhile, the replacement is refused and the next attempt finds out.
        const replacement = await relayer.replace(job.rawTx);
        await store(prisma, job.chargeId, replacement);
        logger.warn(
          { chargeId: job.chargeId, tx: replacement.hash, nonce: replacement.nonce },
          "clone deployment not mined in time; replaced with higher fees",
        );
        await relayer.broadcast(replacement.raw);
        return checkBackSoon(prisma, job);
      }
      // Not mined yet (or never broadcast before a crash): send the very same transaction again.
      if (await relayer.broadcast(job.rawTx)) return checkBackSoon(prisma, job);
    }
    // Reverted, or its nonce went to another transaction: sign a new one below.
  }

  const data = factoryAbi.encodeFunctionData("deploy", [cloneSalt(job.chargeId), job.wallet, job.feeBps]);
  const signed = await relayer.sign({ to: relayer.chain.factory, data });
  await store(prisma, job.chargeId, signed);
  if (!(await relayer.broadcast(signed.raw))) throw new Error(`nonce ${signed.nonce} was already used; will sign again`);
  await checkBackSoon(prisma, job);
}

/** Stores a signed version of the deployment before it is broadcast. */
async function store(prisma: Prisma, chargeId: string, signed: SignedTx): Promise<void> {
  await prisma.cloneDeployment.update({
    where: { chargeId },
    data: { status: "SENT", rawTx: signed.raw, txHash: signed.hash, sentAt: new Date(), lastError: null },
  });
}

/** A sent transaction is usually mined within seconds: look again shortly rather than after the lease. */
async function checkBackSoon(prisma: Prisma, job: ClaimedJob): Promise<void> {
  await prisma.cloneDeployment.update({ where: { chargeId: job.chargeId }, data: { nextAttemptAt: new Date(Date.now() + 1000) } });
}

async function markMined(prisma: Prisma, job: ClaimedJob): Promise<void> {
  await prisma.$transaction([
    prisma.cloneDeployment.update({ where: { chargeId: job.chargeId }, data: { status: "MINED", lastError: null } }),
    prisma.charge.updateMany({ where: { id: job.chargeId, deployedAt: null }, data: { deployedAt: new Date() } }),
  ]);
}
