// The refund claim page: the buyer gives (twice) the address a merchant's refund should go to, and the
// same link then shows where the refund stands. Plain HTML forms on the hosted pages' look, strict CSP
// and no script; the link's token is the capability.
import { formatAmount } from "../domain/money.js";
import type { ClaimView } from "../domain/refunds.js";
import { document } from "./page.js";
import { escapeHtml as h } from "./qr.js";

/** The refund's chain as the page names and links it. */
export interface ClaimChain {
  name: string;
  /** Block explorer base URL; null when there is none (the devnet). */
  explorer: string | null;
}

/** The claim form, with the problem of a refused attempt (`error`) if any. */
export function renderClaimPage(view: ClaimView, chainName: string, token: string, basePath: string, error: string | null = null): string {
  const { refund, merchantName } = view;
  const amount = formatAmount(refund.amount);
  const body = [
    refund.livemode ? "" : `<p class="test-banner" role="note"><strong>TEST MODE</strong>: no real money moves on this page.</p>`,
    `<header><p class="merchant">${h(merchantName)}</p>`,
    `<h1 class="amount">Refund of ${h(amount)} USDC</h1></header>`,
    `<p>${h(merchantName)} will send ${h(amount)} USDC on <strong>${h(chainName)}</strong> to the address you give here.` +
      ` Give the address of a wallet that you control and that can receive USDC on ${h(chainName)} (not the address you paid to): money sent to a wrong address or network cannot be recovered.</p>`,
    error ? `<p class="status error" role="alert">${h(error)}</p>` : "",
    `<form method="post" action="${h(basePath)}/refunds/${h(refund.id)}">`,
    `<input type="hidden" name="token" value="${h(token)}">`,
    `<p><label for="address">Your wallet address on ${h(chainName)}</label><br>` +
      `<input id="address" name="address" required pattern="0x[0-9a-fA-F]{40}" autocomplete="off" spellcheck="false" class="address-input"></p>`,
    `<p><label for="confirmAddress">The same address again</label><br>` +
      `<input id="confirmAddress" name="confirmAddress" required pattern="0x[0-9a-fA-F]{40}" autocomplete="off" spellcheck="false" class="address-input"></p>`,
    `<p><button type="submit">Send my refund to this address</button></p>`,
    `</form>`,
  ].join("\n");
  return document(`Refund of ${amount} USDC from ${merchantName}`, body, null, basePath);
}

/** Once the address was given: where the refund stands (claimed, on its way, completed with its transaction, failed or cancelled). */
export function renderClaimStatus(view: ClaimView, chain: ClaimChain, basePath: string): string {
  const { refund, merchantName } = view;
  const amount = formatAmount(refund.amount);
  const { label, text } = claimState(view, chain.name, amount);
  const tx = refund.txHash && refund.status !== "CANCELLED" ? refund.txHash : null;
  const body = [
    refund.livemode ? "" : `<p class="test-banner" role="note"><strong>TEST MODE</strong>: no real money moves on this page.</p>`,
    `<header><p class="merchant">${h(merchantName)}</p><h1 class="amount">Refund of ${h(amount)} USDC</h1></header>`,
    `<p id="status" class="status" role="status" data-status="${h(refund.status)}"><strong>${h(label)}</strong>: ${h(text)}</p>`,
    `<dl>`,
    `<dt>Amount</dt><dd>${h(amount)} USDC</dd>`,
    `<dt>Network</dt><dd>${h(chain.name)}</dd>`,
    refund.address ? `<dt>To</dt><dd><code class="address">${h(refund.address)}</code></dd>` : "",
    tx
      ? `<dt>Transaction</dt><dd>${
          chain.explorer ? `<a href="${h(`${chain.explorer}/tx/${tx}`)}" class="address">View the transaction</a>` : `<code class="address">${h(tx)}</code>`
        }</dd>`
      : "",
    `</dl>`,
    refund.status === "AWAITING_PAYMENT" ? `<p class="expires">Open this link again later to see it arrive.</p>` : "",
  ].join("\n");
  return document(`Refund of ${amount} USDC from ${merchantName}`, body, null, basePath);
}

/** The refund's state in the buyer's words. */
function claimState({ refund, merchantName }: ClaimView, chainName: string, amount: string): { label: string; text: string } {
  const to = refund.address ?? "";
  if (refund.status === "COMPLETED") return { label: "Completed", text: `${amount} USDC arrived at ${to} on ${chainName}.` };
  if (refund.status === "CANCELLED") {
    return { label: "Cancelled", text: `${merchantName} cancelled this refund, so nothing will be sent. Contact ${merchantName} if you expected it.` };
  }
  const attempt = refund.authorizations?.[0];
  if (refund.txHash) return { label: "On its way", text: `the transfer to ${to} is on ${chainName}, waiting for confirmations.` };
  if (attempt?.status === "FAILED") {
    return {
      label: "Not sent yet",
      text: `${merchantName}'s transfer to ${to} did not go through, so nothing has arrived yet. If it does not arrive soon, contact ${merchantName}.`,
    };
  }
  if (attempt && attempt.endedAt === null)
    return { label: "On its way", text: `${merchantName} has sent it to ${to} on ${chainName}; it arrives in a few minutes.` };
  return { label: "Claimed", text: `${merchantName} will send it on ${chainName} to ${to}. It arrives in that wallet once ${merchantName} has sent it.` };
}
