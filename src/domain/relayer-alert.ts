// The operator's email when a chain's relayer runs low on gas money (ALERT_EMAIL): the error log line
// and /readyz say it too, but nobody reads those at night. Invariants:
// - at most one such email per chain per day, however often the balance is checked while low: the
//   check and the write are one transaction, and only the worker holding the chain's lock checks it;
// - it goes through the outbox like every email (type `alert`, no merchant), so it is sent by the
//   sender with its retries, or held without SMTP_URL.
import { formatEther } from "ethers";
import type { Prisma } from "../db/client.js";
import { renderEmail } from "../email/layout.js";
import { enqueueEmail } from "./emails.js";

const DAY_MS = 24 * 3600_000;

/** What the chain runner saw of a relayer below its minimum. */
export interface LowRelayer {
  chainId: number;
  chainName: string;
  nativeSymbol: string;
  /** Mainnets' relayers pay for live mode; testnets' and the devnet's for test mode. */
  livemode: boolean;
  relayerAddress: string;
  balance: bigint;
  minBalance: bigint;
}

/** The alert's related id: one per chain, what the once-a-day limit counts by. */
function relatedId(chainId: number): string {
  return `relayer:${chainId}`;
}

/** Writes the "relayer balance low" email to `alertTo`, unless one for this chain was written in the day before `at`; returns its id or null. */
export async function alertRelayerLow(prisma: Prisma, r: LowRelayer, alertTo: string, at: Date): Promise<string | null> {
  const amount = (wei: bigint) => `${formatEther(wei)} ${r.nativeSymbol}`;
  const rendered = renderEmail(
    { name: "Stablegate", logo: false },
    {
      heading: `The relayer on ${r.chainName} is low on gas money`,
      paragraphs: [
        `The relayer's balance is below the minimum set for chain ${r.chainId} (CHAIN_${r.chainId}_RELAYER_MIN_BALANCE).`,
        "Fund its address: once it cannot pay for gas, payouts, sweeps and payments without gas stop on this chain.",
      ],
      facts: [
        ["Chain", `${r.chainName} (${r.chainId})`],
        ["Relayer", r.relayerAddress],
        ["Balance", amount(r.balance)],
        ["Minimum", amount(r.minBalance)],
      ],
      footer: ["Sent to ALERT_EMAIL at most once a day per chain while the balance stays low; /readyz reports it until it is funded."],
    },
  );
  return prisma.$transaction(async (tx) => {
    const recent = await tx.email.findFirst({
      where: { type: "alert", merchantId: null, relatedId: relatedId(r.chainId), createdAt: { gt: new Date(at.getTime() - DAY_MS) } },
      select: { id: true },
    });
    if (recent) return null;
    return enqueueEmail(tx, {
      merchantId: null,
      livemode: r.livemode,
      type: "alert",
      to: alertTo,
      subject: `Relayer balance low on ${r.chainName} (${r.chainId}): ${amount(r.balance)}`,
      fromName: "Stablegate",
      relatedId: relatedId(r.chainId),
      ...rendered,
    });
  });
}
