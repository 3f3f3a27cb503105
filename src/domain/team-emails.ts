// Emails to a merchant's team (.docs/email.md "To the merchant's team"): security notices and alerts,
// written to the outbox in the transaction of the change they tell about (a refused or rolled-back
// change tells nothing). Invariants:
// - a notice goes to every user of the merchant as the transaction sees them, or only to the user it
//   is about (their password, their two-factor, their sign-in);
// - an alert about a charge is emailed once per charge and reason (`charge_alerts`), however often
//   the finding is seen again;
// - links are absolute, to the dashboard under PUBLIC_URL; nothing here is ever a secret but the
//   one-time links of password resets and invitations (domain/password-resets.ts, invitations.ts).
import type { Prisma as P } from "../generated/prisma/client.js";
import { headerText } from "../email/address.js";
import { type EmailContent, renderEmail } from "../email/layout.js";
import { enqueueEmail, merchantBrand } from "./emails.js";
import { hashToken } from "./ids.js";

/** The absolute URL of a dashboard page (`path` below /dashboard), with `query`. */
export function dashboardUrl(publicUrl: string, path: string, query: Record<string, string> = {}): string {
  const url = new URL(`${publicUrl.replace(/\/+$/, "")}/dashboard${path}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}

/** An email to a merchant's team. */
export interface TeamEmail {
  type: "security_notice" | "alert" | "password_reset" | "invitation";
  /** The mode of what it is about; test mode for what has none (users, passwords). */
  livemode?: boolean;
  subject: string;
  content: EmailContent;
  relatedId?: string | null;
}

/**
 * Writes `email` in `tx`, in the merchant's name, to `to` (addresses), or to every user of
 * `merchantId` when `to` is not given. Returns how many were written.
 */
export async function emailTeam(tx: P.TransactionClient, merchantId: string, email: TeamEmail, to?: readonly string[]): Promise<number> {
  const merchant = await tx.merchant.findUnique({ where: { id: merchantId }, select: { name: true, logo: true } });
  if (!merchant) return 0;
  const recipients = to ?? (await tx.user.findMany({ where: { merchantId }, select: { email: true }, orderBy: { createdAt: "asc" } })).map((u) => u.email);
  const brand = merchantBrand(merchant);
  const rendered = renderEmail(brand, {
    ...email.content,
    footer: [...(email.content.footer ?? []), `You get this email as a member of ${merchant.name}'s team on Stablegate.`],
  });
  for (const address of new Set(recipients)) {
    await enqueueEmail(tx, {
      merchantId,
      livemode: email.livemode ?? false,
      type: email.type,
      to: address,
      subject: headerText(`${email.subject} (${merchant.name})`, 250),
      fromName: headerText(merchant.name),
      inlineLogo: brand.logo,
      relatedId: email.relatedId ?? null,
      ...rendered,
    });
  }
  return recipients.length;
}

/** What a security notice says: what changed, and the facts (who, which key, which address). */
export interface SecurityNotice {
  subject: string;
  paragraphs: string[];
  facts?: [string, string][];
  livemode?: boolean;
  relatedId?: string | null;
}

const NOT_YOU = "If this was not you or someone on your team, sign in, check your API keys, settlement wallets and users, and change your password.";

/** Writes a `security_notice` in `tx` to every user of `merchantId`, or to `to` only. */
export function securityNotice(tx: P.TransactionClient, merchantId: string, notice: SecurityNotice, to?: readonly string[]): Promise<number> {
  return emailTeam(
    tx,
    merchantId,
    {
      type: "security_notice",
      livemode: notice.livemode,
      subject: notice.subject,
      relatedId: notice.relatedId,
      content: { heading: notice.subject, paragraphs: [...notice.paragraphs, NOT_YOU], facts: [...(notice.facts ?? []), ["When", new Date().toISOString()]] },
    },
    to,
  );
}

/** A charge the team should look at, as an alert tells it. */
export interface ChargeAlert {
  charge: { id: string; merchantId: string; livemode: boolean; orderId: string };
  kind: "review" | "payout_blocked";
  reason: string;
}

/** How many charges a batched alert names; the rest are counted. */
const ALERT_LISTED = 20;

/**
 * Writes, in `tx`, the `alert` emails for `alerts`: each charge and reason is told once (charge_alerts),
 * and the charges of one merchant, mode, kind and reason found together go in one email to its users,
 * not one each: a paused token or a deep reorg can touch thousands of charges at once. Past the first
 * such email of a day for that merchant, mode, kind and reason, the charges are only recorded (the
 * dashboard lists them). `publicUrl` (when known) links the dashboard.
 */
export async function alertTeam(tx: P.TransactionClient, alerts: ChargeAlert[], publicUrl: string | undefined, now = new Date()): Promise<void> {
  const groups = new Map<string, ChargeAlert[]>();
  for (const alert of alerts) {
    const key = alert.kind === "review" ? `review:${hashToken(alert.reason)}` : `payout_blocked:${alert.reason}`;
    const inserted = await tx.$executeRaw`INSERT INTO charge_alerts (charge_id, reason) VALUES (${alert.charge.id}, ${key}) ON CONFLICT DO NOTHING`;
    if (inserted === 0) continue;
    const group = `${alert.charge.merchantId}\n${alert.charge.livemode}\n${key}`;
    groups.set(group, [...(groups.get(group) ?? []), alert]);
  }
  for (const group of groups.values()) await alertGroup(tx, group, publicUrl, now);
}

/** One alert email about `group` (same merchant, mode, kind and reason), unless one went out today. */
async function alertGroup(tx: P.TransactionClient, group: ChargeAlert[], publicUrl: string | undefined, now: Date): Promise<void> {
  const [{ charge, kind, reason }] = group as [ChargeAlert];
  const review = kind === "review";
  const one = group.length === 1;
  const subject = one
    ? review
      ? `Charge ${charge.id} needs review`
      : `Payout blocked for charge ${charge.id}`
    : review
      ? `${group.length} charges need review`
      : `Payouts blocked for ${group.length} charges`;
  if (!one) {
    const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const sameToday = await tx.email.count({
      where: {
        merchantId: charge.merchantId,
        livemode: charge.livemode,
        type: "alert",
        relatedId: null,
        createdAt: { gte: dayStart },
        text: { contains: reason },
      },
    });
    if (sameToday > 0) return;
  }
  const listed = group.slice(0, ALERT_LISTED).map((a): [string, string] => ["Charge", `${a.charge.id} (order ${a.charge.orderId})`]);
  const more = group.length - listed.length;
  await emailTeam(tx, charge.merchantId, {
    type: "alert",
    livemode: charge.livemode,
    subject,
    relatedId: one ? charge.id : null,
    content: {
      heading: subject,
      paragraphs: [
        review
          ? "The ledger and the chain disagree about these charges. Nothing was corrected by itself: look at each and mark it reviewed once resolved."
          : "Money confirmed for these charges cannot be paid out to your settlement wallet right now. It stays safe in each charge's address; payouts are tried again.",
        ...(more > 0 ? [`And ${more} more: the dashboard lists them all.`] : []),
      ],
      facts: [...listed, ["Mode", charge.livemode ? "live" : "test"], ["Reason", reason]],
      ...(publicUrl && {
        action: one
          ? { label: "Open the charge", url: dashboardUrl(publicUrl, `/charges/${charge.id}`) }
          : { label: "Open the charges", url: dashboardUrl(publicUrl, "/charges") },
      }),
    },
  });
}
