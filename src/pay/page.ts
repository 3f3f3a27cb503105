// The hosted payment page, rendered on the server: everything a buyer needs to pay (network,
// address, exact amount, QR code, the deadline and how picking a network moves it) is in the HTML,
// so it reads without JavaScript. The script (assets/pay.js) adds copy buttons, the countdown, live
// status and wallet payment (with the wallet chooser of assets/wallets.js).
import { DEVNET_CHAIN_ID } from "../chain/anvil.js";
import { FAVICON_LINK } from "../http/favicon.js";
import { PAGE_TOKEN_PARAM } from "../http/hosted-pages.js";
import type { GaslessOffer } from "../domain/charge-authorizations.js";
import type { PublicChain, PublicCharge } from "../domain/payment-session.js";
import { parseAmount } from "../domain/money.js";
import { usdcTransferUri } from "./eip681.js";
import { escapeHtml as h, qrSvg } from "./qr.js";

/** Where the page's forms and scripts point. */
export interface PageLinks {
  /** The page's own path prefix, e.g. /pay. */
  basePath: string;
  /** Where the script opens the live status stream. */
  graphqlUrl: string;
  /** Whether this service can pay test charges on the devnet from its funded test account. */
  testWallet: boolean;
  /** This page's token (http/hosted-pages.ts): its own requests send it back, and pass anonymous floods. */
  pageToken?: string;
}

/** The page of one charge; `gasless` when the buyer may pay without gas (the script offers it to wallets that sign typed data). */
export function renderPaymentPage(s: PublicCharge, links: PageLinks, gasless: GaslessOffer | null = null): string {
  const chain = s.chainId === null ? null : (s.chains.find((c) => c.chainId === s.chainId) ?? null);
  const config = {
    chargeId: s.id,
    graphqlUrl: links.graphqlUrl,
    pageToken: links.pageToken ?? null,
    // Where the buyer goes once the charge completes.
    completedUrl: s.successUrl ? successLink({ ...s, status: "COMPLETED" }) : null,
    chain: chain && { chainId: chain.chainId, name: chain.name, usdc: chain.usdcAddress, explorerUrl: chain.explorerUrl },
    cloneAddress: s.cloneAddress,
    gasless,
    paymentWindowMinutes: s.paymentWindowMinutes,
    // What this page was drawn for: when the live view differs, the script reloads it. The amount
    // due is what the script asks a wallet to pay (as data: the page's text is for people).
    shown: { chainId: s.chainId, amountRemaining: s.amountRemaining, waiting: s.amountPending !== "0.00" },
  };
  const body = [
    s.livemode ? "" : `<p class="test-banner" role="note"><strong>TEST MODE</strong>: no real money moves on this page.</p>`,
    backToShop(s),
    `<header><p class="merchant">${h(s.merchantName)}</p>`,
    s.description ? `<p class="description">${h(s.description)}</p>` : "",
    `<h1 class="amount"><span id="amount">${h(s.amount)}</span> USDC</h1>`,
    deadline(s),
    `</header>`,
    `<section aria-labelledby="status-title"><h2 id="status-title" class="visually-hidden">Status</h2>` +
      `<p id="status" class="status" role="status" aria-live="polite" data-status="${h(s.status)}">${h(s.statusMessage)}</p>` +
      overpaidNote(s.amountOverpaid) +
      `<ul id="payments" class="payments">${s.payments.map((p) => `<li>${h(paymentText(p, s.confirmationsRequired))}</li>`).join("")}</ul>` +
      outcome(s, chain) +
      `</section>`,
    s.status === "PENDING" ? paySection(s, chain, links) : "",
  ].join("\n");
  return document(`Pay ${s.amount} USDC to ${s.merchantName}`, body, config, links.basePath);
}

/**
 * The deadline while the charge is pending, and the rule that moves it (domain/chain-selection.ts):
 * before the pick, the time left to pick and the window that picking opens; after it, the time left
 * to pay and where it came from. The script counts down `#time-left` (hidden from screen readers:
 * it changes every second) and announces the change of deadline in `#window-change`.
 */
function deadline(s: PublicCharge): string {
  if (s.status !== "PENDING") return "";
  const minutes = `${s.paymentWindowMinutes} minute${s.paymentWindowMinutes === 1 ? "" : "s"}`;
  const when = `<time id="expires" datetime="${h(s.expiresAt)}">${h(formatTime(s.expiresAt))}</time> <span id="time-left" aria-hidden="true"></span>`;
  const [line, note] =
    s.chainId === null
      ? [`Choose a network before ${when}`, `Once you pick a network you have <strong>${minutes}</strong> to pay, counted from your pick.`]
      : [`Pay before ${when}`, `You have ${minutes} to pay from the moment the network was picked.`];
  return (
    `<div id="deadline" data-phase="${s.chainId === null ? "pick" : "pay"}"><p class="expires">${line}</p>` +
    `<p class="window-note" id="window-note">${note}</p>` +
    `<p class="window-change" id="window-change" role="status"></p></div>`
  );
}

/** The way back to the shop, while the buyer may still want to leave unpaid (the shop's `cancelUrl`). */
function backToShop(s: PublicCharge): string {
  if (!s.cancelUrl || !["PENDING", "EXPIRED", "CANCELLED"].includes(s.status)) return "";
  return `<p class="back"><a id="back-to-shop" href="${h(s.cancelUrl)}"><span aria-hidden="true">← </span>Back to ${h(s.merchantName)}</a></p>`;
}

function paySection(s: PublicCharge, chain: PublicChain | null, links: PageLinks): string {
  if (s.chainId === null) return chainPicker(s, links);
  if (!chain) return `<p>This payment's network is not available right now. Please contact the shop before sending anything.</p>`;
  // Asking for money while a payment is still being confirmed would invite paying twice.
  if (s.amountPending !== "0.00") {
    return `<section class="pay" aria-labelledby="pay-title"><h2 id="pay-title">Waiting for confirmations on ${h(chain.name)}</h2>
<p>A payment of ${h(s.amountPending)} USDC to <code class="address">${h(s.cloneAddress!)}</code> is being confirmed. Please wait before sending anything more: this page updates by itself.</p></section>`;
  }
  return payPanel(s, chain, links);
}

function chainPicker(s: PublicCharge, links: PageLinks): string {
  if (s.chains.length === 0) return `<p>No network is available for this payment right now. Please contact the shop.</p>`;
  const options = s.chains
    .map((c, i) => `<li><label><input type="radio" name="chainId" value="${c.chainId}"${i === 0 ? " checked" : ""}> ${h(c.name)}</label></li>`)
    .join("");
  return (
    // The token rides in the action's query: a form post without the script cannot send a header.
    `<form method="post" action="${h(`${links.basePath}/${s.id}/chain${tokenQuery(links)}`)}" class="picker" id="picker">` +
    `<fieldset><legend>Choose the network you will pay on</legend><ul>${options}</ul></fieldset>` +
    `<button type="submit">Continue</button></form>`
  );
}

/** `?page_token=…` for a page that has a token, else nothing. */
function tokenQuery(links: PageLinks): string {
  return links.pageToken ? `?${PAGE_TOKEN_PARAM}=${encodeURIComponent(links.pageToken)}` : "";
}

function payPanel(s: PublicCharge, chain: PublicChain, links: PageLinks): string {
  const remaining = s.amountRemaining;
  const units = parseAmount(remaining) ?? 0n;
  const uri = usdcTransferUri(chain.usdcAddress, chain.chainId, s.cloneAddress!, units);
  const testWallet = offersTestWallet(s, links.testWallet)
    ? `<form method="post" action="${h(`${links.basePath}/${s.id}/test-payment`)}"><button type="submit" class="test">Pay with test wallet (TEST MODE)</button></form>`
    : "";
  return `<section class="pay" aria-labelledby="pay-title">
<h2 id="pay-title">Send <span class="nowrap"><span id="remaining">${h(remaining)}</span> USDC</span> on ${h(chain.name)}</h2>
<p class="warning" role="note">Send only <strong>native USDC</strong> on <strong>${h(chain.name)}</strong> (chain id ${chain.chainId}). Any other token, or the right token on another network, cannot be credited.</p>
<dl>
<dt>Network</dt><dd id="network">${h(chain.name)}</dd>
<dt>Amount</dt><dd><code id="exact-amount">${h(remaining)}</code> USDC <button type="button" class="copy" data-copy="${h(remaining)}" hidden>Copy amount</button></dd>
<dt>Address</dt><dd><code id="address" class="address">${h(s.cloneAddress!)}</code> <button type="button" class="copy" data-copy="${h(s.cloneAddress!)}" hidden>Copy address</button></dd>
<dt>Token</dt><dd><code class="address">${h(chain.usdcAddress)}</code></dd>
</dl>
<figure class="qr">${qrSvg(uri, `QR code: pay ${remaining} USDC to ${s.cloneAddress} on ${chain.name}`)}<figcaption>Scan with a wallet app</figcaption></figure>
<p class="waiting-note">A payment is being confirmed. Please wait before sending anything more: this page updates by itself.</p>
${walletChooser("Pay from")}
<p class="wallet"><button type="button" id="pay-gasless" hidden>Pay with your wallet (no gas needed)</button><button type="button" id="pay-wallet" hidden>Pay with your wallet</button></p>
<p id="wallet-message" class="wallet-message" role="alert"></p>
${testWallet}
</section>`;
}

function outcome(s: PublicCharge, chain: PublicChain | null): string {
  if (s.status === "COMPLETED") {
    const tx = s.flushTxHash && chain?.explorerUrl ? `<a href="${h(`${chain.explorerUrl}/tx/${s.flushTxHash}`)}">View the settlement transaction</a>` : "";
    const back = s.successUrl ? `<a href="${h(successLink(s))}" id="continue">Return to the shop</a>` : "";
    return `<p id="outcome">${tx} ${back}</p>`;
  }
  return `<p id="outcome"></p>`;
}

/**
 * What the buyer is told about money paid beyond the amount (hidden while there is none; the script
 * fills it from the live view's amountOverpaid, in the same words).
 */
function overpaidNote(amountOverpaid: string): string {
  const text = amountOverpaid === "0.00" ? "" : `You paid ${h(amountOverpaid)} USDC more than asked. The merchant has been notified and can refund it.`;
  return `<p id="overpaid" class="overpaid" aria-live="polite"${text ? "" : " hidden"}>${text}</p>`;
}

/** Where assets/wallets.js lists the browser's wallets when there are two or more (under `legend`). */
export function walletChooser(legend: string): string {
  return `<fieldset id="wallets" class="wallets" hidden><legend>${h(legend)}</legend><ul></ul></fieldset>`;
}

/** Whether the test wallet can pay this charge: a test-mode charge on the devnet, when this process runs the devnet. */
export function offersTestWallet(s: Pick<PublicCharge, "livemode" | "chainId">, devnetRunning: boolean): boolean {
  return devnetRunning && !s.livemode && s.chainId === DEVNET_CHAIN_ID;
}

/** `successUrl` with chargeId, orderId and status added to its query. */
function successLink(s: Pick<PublicCharge, "id" | "orderId" | "status" | "successUrl">): string {
  const url = new URL(s.successUrl!);
  url.searchParams.set("chargeId", s.id);
  url.searchParams.set("orderId", s.orderId);
  url.searchParams.set("status", s.status);
  return url.toString();
}

function paymentText(p: PublicCharge["payments"][number], required: number | null): string {
  return p.status === "confirmed"
    ? `${p.amount} USDC confirmed`
    : `${p.amount} USDC seen, ${Math.min(p.confirmations, required ?? 1)} of ${required ?? 1} confirmations`;
}

function formatTime(iso: string): string {
  return `${iso.slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * A page of the hosted pages' look (their stylesheet and icon; `script`, an ES module, only with a
 * `config`; loading itself again after `refreshSeconds`).
 */
export function document(
  title: string,
  body: string,
  config: object | null,
  basePath: string,
  refreshSeconds: number | null = null,
  script = "pay.js",
): string {
  const assets = `${basePath}/assets`;
  // The config is JSON in a data block (not a script the browser runs), so the CSP can forbid inline scripts.
  const data = config ? `<script type="application/json" id="session">${JSON.stringify(config).replace(/</g, "\\u003c")}</script>` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">\n` : ""}<title>${h(title)}</title>
${FAVICON_LINK}
<link rel="stylesheet" href="${assets}/pay.css">
${config ? `<script type="module" src="${assets}/${script}"></script>` : ""}
</head>
<body>
<main>
${body}
</main>
<footer><p>Non-custodial payment by Stablegate: your payment goes straight to the shop's wallet.</p></footer>
${data}
</body>
</html>
`;
}
