// The refund claim page: the buyer gives (twice) the address a merchant's refund should go to. Plain
// HTML forms on the hosted pages' look, strict CSP and no script; the link's token is the capability.
import type { ClaimView } from "../domain/refunds.js";
import { formatAmount } from "../domain/money.js";
import { document } from "./page.js";
import { escapeHtml as h } from "./qr.js";

/** The claim form, with the problem of a refused attempt (`error`) if any. */
export function renderClaimPage(view: ClaimView, chainName: string, token: string, basePath: string, error: string | null = null): string {
  const { refund, merchantName } = view;
  const amount = formatAmount(refund.amount);
  const body = [
    refund.livemode ? "" : `<p class="test-banner" role="note"><strong>TEST MODE</strong>: no real money moves on this page.</p>`,
    `<header><p class="merchant">${h(merchantName)}</p>`,
    `<h1 class="amount">Refund of ${h(amount)} USDC</h1></header>`,
    `<p>${h(merchantName)} will send ${h(amount)} USDC on <strong>${h(chainName)}</strong> to the address you give here.` +
      ` Give the address of a wallet that you control and that can receive USDC on ${h(chainName)}: money sent to a wrong address or network cannot be recovered.</p>`,
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

/** After the address was given: where and how the refund will come. */
export function renderClaimed(view: ClaimView, chainName: string, basePath: string): string {
  const { refund, merchantName } = view;
  const amount = formatAmount(refund.amount);
  const body = [
    `<header><p class="merchant">${h(merchantName)}</p><h1 class="amount">Refund of ${h(amount)} USDC</h1></header>`,
    `<p class="status" role="status">${h(merchantName)} will send it on ${h(chainName)} to <code>${h(refund.address ?? "")}</code>.` +
      ` It arrives in that wallet once the shop has sent it; this link has done its job and no longer works.</p>`,
  ].join("\n");
  return document(`Refund of ${amount} USDC from ${merchantName}`, body, null, basePath);
}
