// The subscription's two buyer pages, rendered on the server in the hosted pages' look: the checkout
// (what is billed, in words; the chains; the wallet chooser of assets/wallets.js; the two signatures explained before they
// are asked for) and the manage page (status, next charge, invoices, cancel, revoke on chain). What
// needs a wallet is done by assets/subscribe.js; everything else reads and works without it.
import { revokeCalldata } from "../chain/subscriptions.js";
import { formatAmount } from "../domain/money.js";
import { allowanceWords, type ManageView, type SubscriptionView } from "../domain/subscription-checkout.js";
import { document, walletChooser } from "./page.js";
import { escapeHtml as h } from "./qr.js";

const STATUS_WORDS: Record<string, string> = {
  INCOMPLETE: "Waiting for your authorization",
  INCOMPLETE_EXPIRED: "Expired: it was never authorized",
  TRIALING: "In its free trial",
  ACTIVE: "Active",
  PAST_DUE: "Past due: the last payment failed and will be tried again",
  CANCELED: "Canceled",
};

/** An invoice's status as the buyer reads it. */
const INVOICE_WORDS: Record<string, string> = { OPEN: "Due", PAID: "Paid", VOID: "Voided", UNCOLLECTIBLE: "Unpaid" };

/** The checkout of `view`: the authorization steps while it takes one, otherwise a page saying where it stands. */
export function renderCheckoutPage(view: SubscriptionView, basePath: string, now = new Date()): string {
  const s = view.subscription;
  const title = `Subscribe to ${view.plan.name} · ${view.merchantName}`;
  const head = header(view);
  const expired = s.status === "INCOMPLETE_EXPIRED" || (s.status === "INCOMPLETE" && s.expiresAt <= now);
  if (expired)
    return document(
      title,
      `${head}\n<h2>This checkout has expired</h2><p>It was not authorized in time, and nothing was charged. Ask ${h(view.merchantName)} for a new link.</p>`,
      null,
      basePath,
    );
  if (s.status === "CANCELED")
    return document(
      title,
      `${head}\n<h2>This subscription was canceled</h2><p>Nothing more will be charged. Ask ${h(view.merchantName)} for a new link to subscribe again.</p>`,
      null,
      basePath,
    );
  if (s.status !== "INCOMPLETE") {
    return document(
      title,
      `${head}\n<h2>This subscription is already authorized</h2><p>Status: ${h(STATUS_WORDS[s.status] ?? s.status)}. Use the manage link ${h(view.merchantName)} sent you to see or cancel it.</p>`,
      null,
      basePath,
    );
  }
  const config = { page: "checkout", subscriptionId: s.id, basePath, chains: view.chains, starting: s.permission !== null };
  const chains = view.chains.length
    ? `<fieldset><legend>Network</legend><ul>${view.chains
        .map((c, i) => `<li><label><input type="radio" name="chainId" value="${c.chainId}"${i === 0 ? " checked" : ""}> ${h(c.name)}</label></li>`)
        .join("")}</ul></fieldset>`
    : `<p>No network is available for this subscription right now. Please contact ${h(view.merchantName)}.</p>`;
  const body = `${head}
<section aria-labelledby="status-title"><h2 id="status-title" class="visually-hidden">Status</h2>
<p id="status" class="status" role="status" aria-live="polite" data-status="${h(s.status)}">${s.permission ? "Your authorization was received: the subscription is being started on chain. This page updates by itself." : "Not authorized yet."}</p>
${view.failure ? `<p id="failure" class="warning" role="alert">${h(view.failure)}</p>` : ""}</section>
<section class="pay" id="authorize"${s.permission ? " hidden" : ""} aria-labelledby="allow-title">
<h2 id="allow-title">What you allow</h2>
<p id="allowance">${h(allowanceWords(view))}.</p>
<p>Each payment goes straight from your wallet to ${h(view.merchantName)}, at most once per period. You need no gas: the service sends the transactions. You can cancel here or on the manage page, and revoke the permission from your wallet at any time.</p>
<ol class="steps">
<li>Your wallet asks you to sign a <strong>USDC permit</strong>: it lets the subscription contract use your USDC, only as the next signature allows.</li>
<li>Then a <strong>subscription permission</strong>: ${h(view.priceWords)} at most, to ${h(view.merchantName)}, until you cancel.</li>
</ol>
<form id="checkout">
${chains}
${walletChooser("Subscribe from")}
<p class="wallet"><button type="submit" id="subscribe" disabled>Subscribe with your wallet</button></p>
</form>
<noscript><p>Subscribing needs JavaScript and a browser wallet.</p></noscript>
<p id="wallet-message" class="wallet-message" role="alert"></p>
</section>`;
  return document(title, body, config, basePath, null, "subscribe.js");
}

/** The manage page of `view` (reached with its token); `notice` says what the last action did. */
export function renderManagePage(view: ManageView, token: string, basePath: string, notice: string | null = null): string {
  const s = view.subscription;
  const ended = s.status === "CANCELED" || s.status === "INCOMPLETE_EXPIRED";
  const iso = (d: Date | null) => (d ? `${d.toISOString().slice(0, 10)}` : "");
  const next = nextCharge(view);
  const action = `${basePath}/subscribe/${encodeURIComponent(s.id)}/manage/cancel`;
  const cancelForms = ended
    ? ""
    : `<section aria-labelledby="cancel-title"><h2 id="cancel-title">Cancel</h2>
${s.currentPeriodEnd && !s.cancelAtPeriodEnd ? `<form method="post" action="${h(action)}"><input type="hidden" name="token" value="${h(token)}"><input type="hidden" name="at" value="period_end"><button type="submit" id="cancel-period-end">Cancel at the end of this period (${h(iso(s.currentPeriodEnd))})</button></form>` : ""}
<form method="post" action="${h(action)}"><input type="hidden" name="token" value="${h(token)}"><input type="hidden" name="at" value="now"><button type="submit" id="cancel-now" class="secondary">Cancel now</button></form>
</section>`;
  const config = view.permission
    ? {
        page: "manage",
        subscriptionId: s.id,
        basePath,
        chainId: s.chainId,
        contract: s.contractAddress,
        payer: s.payer,
        // revoke(permission), built here so that the page's script encodes nothing itself.
        revokeData: revokeCalldata(view.permission),
      }
    : null;
  const chainName = view.chains.find((c) => c.chainId === s.chainId)?.name ?? (s.chainId ? `chain ${s.chainId}` : "");
  const invoices = view.invoices.length
    ? `<table class="invoices"><thead><tr><th>Invoice</th><th>Period</th><th>Amount</th><th>Status</th></tr></thead><tbody>${view.invoices
        .map(
          (i) =>
            `<tr><td><a href="${h(`${basePath}/invoices/${encodeURIComponent(i.id)}`)}">${h(i.number ?? i.id)}</a></td><td>${h(iso(i.periodStart))} – ${h(iso(i.periodEnd))}</td><td>${h(formatAmount(i.total))} USDC</td><td>${h(INVOICE_WORDS[i.status] ?? i.status)}</td></tr>`,
        )
        .join("")}</tbody></table>`
    : `<p>No invoices yet.</p>`;
  const body = `${header(view)}
${notice ? `<p id="notice" class="status" role="status">${h(notice)}</p>` : ""}
<section aria-labelledby="sub-title"><h2 id="sub-title">Your subscription</h2>
<dl>
<dt>Status</dt><dd id="status" data-status="${h(s.status)}">${h(STATUS_WORDS[s.status] ?? s.status)}${s.cancelAtPeriodEnd && !ended ? `, ends on ${h(iso(s.currentPeriodEnd))}` : ""}</dd>
<dt>Plan</dt><dd>${h(view.plan.name)}: ${h(view.priceWords)}</dd>
${next ? `<dt>Next charge</dt><dd id="next-charge">${h(next)}</dd>` : ""}
${s.payer ? `<dt>Paid from</dt><dd><code class="address">${h(s.payer)}</code> on ${h(chainName)}</dd>` : ""}
${s.canceledAt ? `<dt>Canceled</dt><dd>${h(iso(s.canceledAt))}</dd>` : ""}
</dl></section>
<section aria-labelledby="invoices-title"><h2 id="invoices-title">Invoices</h2>${invoices}</section>
${cancelForms}
${
  view.permission
    ? `<section aria-labelledby="revoke-title"><h2 id="revoke-title">Revoke on chain</h2>
<p>Revoking the permission from your wallet stops every future payment whatever happens here. It is a transaction your wallet (${h(s.payer!)}) sends, so it needs a little gas.</p>
${walletChooser("Revoke from")}
<p><button type="button" id="revoke" class="secondary" hidden>Revoke with your wallet</button></p>
<p id="wallet-message" class="wallet-message" role="alert"></p></section>`
    : ""
}`;
  return document(`${view.plan.name} · ${view.merchantName}`, body, config, basePath, null, "subscribe.js");
}

function header(view: SubscriptionView): string {
  const s = view.subscription;
  return [
    s.livemode ? "" : `<p class="test-banner" role="note"><strong>TEST MODE</strong>: no real money moves on this page.</p>`,
    `<header><p class="merchant">${h(view.merchantName)}</p>`,
    `<p class="description" id="plan">${h(view.plan.name)}</p>`,
    `<h1 class="amount" id="price">${h(view.priceWords)}</h1>`,
    s.trialDays > 0
      ? `<p id="trial">Free for ${s.trialDays} day${s.trialDays === 1 ? "" : "s"}, then ${h(view.priceWords)}, until you cancel.</p></header>`
      : `<p>Until you cancel.</p></header>`,
  ].join("\n");
}

/** "2026-12-27: 25.00 USDC" while payments are still due. */
function nextCharge(view: ManageView): string | null {
  const s = view.subscription;
  if (!["TRIALING", "ACTIVE", "PAST_DUE"].includes(s.status) || s.cancelAtPeriodEnd) return null;
  const at = s.status === "PAST_DUE" ? s.nextPullAt : s.status === "TRIALING" ? s.trialEnd : s.currentPeriodEnd;
  return at ? `${at.toISOString().slice(0, 10)}: ${formatAmount(s.amount)} USDC` : null;
}
