// The operator's commands on charges and chains: `payouts retry`, `reconcile`, `sweep`, `charges reviewed`.
import { retryPayout } from "../../domain/payouts.js";
import { markChargeReviewed } from "../../domain/review.js";
import { sweepSchema } from "../../domain/sweep-requests.js";
import { getSweep, requestSweep, sweepResource } from "../../domain/sweeps.js";
import { parseInput } from "../../domain/validation.js";
import { authorizationReaders } from "../../chain/authorizations.js";
import { DEVNET_CHAIN_ID } from "../../chain/anvil.js";
import { ChainSet } from "../../chain/chains.js";
import { ChainRpc } from "../../chain/rpc.js";
import { findUnknownDeposits, reconcileChain } from "../../jobs/reconcile.js";
import { formatAmount } from "../../domain/money.js";
import { type Command, CommandError, enabledChains, UsageError } from "../command.js";

/** How long `sweep` waits for the worker to send the transaction. */
const SWEEP_WAIT_MS = 5 * 60_000;

const payoutsRetry: Command = {
  names: ["payouts retry"],
  usage: `  payouts retry CHARGE_ID                                Tries a stopped payout again (a charge whose
                                                         payoutBlockedReason is flush_failing).`,
  async run({ open, print, need }) {
    const { prisma, settings } = await open();
    const charge = await retryPayout(prisma, settings, need("CHARGE_ID"));
    const state = charge.payoutBlockedReason
      ? `still blocked (${charge.payoutBlockedReason}); checked again on the next round`
      : "the worker tries it on its next round";
    print(`Payout of ${charge.id}: ${state}.`, { id: charge.id, payoutBlockedReason: charge.payoutBlockedReason });
  },
};

/** Why the embedded database's `reconcile` cannot reach the devnet, and where the devnet is reconciled instead. */
const DEVNET_OUT_OF_REACH =
  "The devnet runs only inside `npm start`, which holds the embedded database while it runs: its worker reconciles the devnet " +
  "every RECONCILE_INTERVAL_MS (differences show in the dashboard and /metrics). On the embedded database `stablegate reconcile` " +
  "works with the service stopped, on the chains CHAIN_<id>_RPC_URL enables; on PostgreSQL it works beside the running service, its devnet included.";

const reconcile: Command = {
  names: ["reconcile"],
  usage: `  reconcile [--chain ID] [--unknown-since BLOCK] [--json] Compares the ledger with each chain (clone balances,
                                                         recent transfers); exit 1 when they differ. Read-only.
                                                         On PostgreSQL: beside the running service, its devnet
                                                         included. On the embedded database: only with the
                                                         service stopped (it holds DATA_DIR), and only on the
                                                         chains CHAIN_<id>_RPC_URL enables (the devnet stops
                                                         with the service; its worker reconciles it).
                                                         --unknown-since also lists addresses no charge has that
                                                         our factory paid out to a merchant since BLOCK (after a
                                                         restore: charges made after the backup).`,
  async run({ config, flags, open }) {
    const chainId = flags.chain === undefined ? undefined : Number(flags.chain);
    const since = flags["unknown-since"];
    if (since !== undefined && !/^\d+$/.test(since)) throw new UsageError("--unknown-since takes a block number.");
    // Embedded, the devnet is never up while this process can open the database: refused before opening it.
    const embedded = !config.databaseUrl;
    const all = embedded ? ChainSet.configured(config.chains, []).all() : enabledChains(config).all();
    const chosen = chainId === undefined ? all : all.filter((c) => c.chainId === chainId);
    if (chosen.length === 0 && embedded && (chainId === DEVNET_CHAIN_ID || (chainId === undefined && config.devnet))) {
      throw new CommandError(DEVNET_OUT_OF_REACH);
    }
    if (chosen.length === 0) throw new UsageError(chainId === undefined ? "No chain is enabled." : `Chain ${flags.chain} is not enabled.`);
    const { prisma } = await open();
    const results = [];
    const unknownDeposits = [];
    for (const chain of chosen) {
      const rpc = new ChainRpc(chain.chainId, chain.rpcUrls);
      try {
        results.push(await reconcileChain(prisma, rpc, chain));
        if (since !== undefined) unknownDeposits.push(...(await findUnknownDeposits(prisma, rpc, chain, BigInt(since))));
      } finally {
        rpc.destroy();
      }
    }
    const differences = results.flatMap((r) => r.differences);
    if (flags.json) {
      const unknown = unknownDeposits.map((d) => ({ ...d, amount: formatAmount(d.amount) }));
      console.log(JSON.stringify({ differences, ...(since !== undefined && { unknownDeposits: unknown }) }, null, 2));
    } else {
      for (const r of results) {
        const at = r.block === null ? "not indexed yet" : `block ${r.block}`;
        console.log(
          `Chain ${r.chainId} (${at}): ${r.checked} addresses and ${r.transfersChecked} recent transfers checked, ${r.differences.length} differences.`,
        );
      }
      for (const d of differences) console.log(`  ${d.chargeId}: ${d.message}`);
      if (since !== undefined) console.log(`${unknownDeposits.length} addresses no charge has were paid out since block ${since}.`);
      for (const d of unknownDeposits)
        console.log(`  chain ${d.chainId} ${d.address}: ${formatAmount(d.amount)} USDC to merchant ${d.merchantId} in ${d.txHashes.join(", ")}`);
    }
    if (differences.length > 0 || unknownDeposits.length > 0) process.exitCode = 1;
  },
};

const sweep: Command = {
  names: ["sweep"],
  usage: `  sweep CHARGE_ID --token 0x…|eth [--chain ID] [--detach]
      Pays another token (or the chain's native coin) out of the charge's address to its merchant's
      wallet; the worker sends it. Waits for the transaction unless --detach.`,
  async run({ config, flags, args, open, print }) {
    const { db, prisma } = await open();
    const [chargeId] = args;
    if (!chargeId || !flags.token) throw new UsageError("Usage: stablegate sweep CHARGE_ID --token 0x…|eth [--chain ID] [--detach]");
    const input = { token: flags.token, ...(flags.chain !== undefined && { chainId: Number(flags.chain) }) };
    const chains = enabledChains(config);
    const door = { chains, readers: authorizationReaders(chains), relayerGasBudget: config.relayerGasBudgetPerMerchant };
    const sweep = await requestSweep(prisma, door, null, chargeId, parseInput(sweepSchema, input));
    // No worker can run on the embedded database while we hold it: waiting could only time out.
    if (flags.detach || db.kind === "embedded") {
      const when = db.kind === "embedded" ? " once the service runs again" : "";
      return print(`Sweep ${sweep.id} asked for; the worker sends it${when}.`, sweepResource(sweep));
    }
    const until = Date.now() + SWEEP_WAIT_MS;
    for (;;) {
      const now = await getSweep(prisma, null, sweep.id);
      if (now.status === "DONE" || now.status === "FAILED") {
        const shown = sweepResource(now);
        if (now.status === "FAILED") throw new CommandError(`Sweep ${sweep.id} failed: ${now.error}`);
        return print(`Swept ${sweep.token} of ${chargeId} on chain ${sweep.chainId} in ${shown.txHash}.`, shown);
      }
      if (Date.now() > until)
        throw new CommandError(`Sweep ${sweep.id} is still ${now.status} after 5 minutes: is a worker running for chain ${sweep.chainId}?`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  },
};

const chargesReviewed: Command = {
  names: ["charges reviewed"],
  usage: "  charges reviewed CHARGE_ID                             Marks a charge that needs review as reviewed.",
  async run({ open, print, need }) {
    const { prisma, settings } = await open();
    const id = need("CHARGE_ID");
    const charge = await prisma.charge.findUnique({ where: { id }, select: { merchantId: true, livemode: true } });
    if (!charge) throw new CommandError(`No charge ${id}.`);
    const reviewed = await markChargeReviewed(prisma, charge, id, settings);
    print(`${reviewed.id} marked reviewed.`, { id: reviewed.id, needsReview: reviewed.reviewReason !== null });
  },
};

export const operationCommands = [payoutsRetry, reconcile, sweep, chargesReviewed];
