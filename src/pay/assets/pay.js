// The hosted payment page's script (an ES module): copy buttons, the countdown, live status over SSE
// (paymentSessionUpdated), and "Pay with <wallet>" (the wallet chooser of wallets.js), without
// gas (a signed EIP-3009 authorization the service relays) when the service offers it.
// Without it the page still shows everything needed to pay. Every request of its own carries the
// page's token (http/hosted-pages.ts), so the service serves it ahead of anonymous floods; one refused
// as busy (429/503) is tried again after its Retry-After, and the buyer hears of it only if it keeps failing.
// Amounts come as data (the page's config and the live view, decimal strings) and are read and
// written by money.js, the service's own money module; never from the page's text.
import { TOKEN_DOMAIN_FIELDS, TRANSFER_WITH_AUTHORIZATION_TYPES } from "./eip3009.js";
import { formatUnits, parseUnits, USDC_DECIMALS } from "./money.js";
import { chooseWallets, nameButton } from "./wallets.js";

const config = JSON.parse(document.getElementById("session").textContent);
const $ = (id) => document.getElementById(id);
const statusEl = $("status");
const token = config.pageToken;
const TOKEN_PARAM = "page_token";
const tokenHeaders = token ? { "Stablegate-Page-Token": token } : {};
/** `url` with this page's token in its query (where no header can be sent: a navigation, an EventSource). */
const withToken = (url) => {
  if (!token) return url;
  const u = new URL(url, location.href);
  u.searchParams.set(TOKEN_PARAM, token);
  return u.toString();
};
/** This page again, drawn afresh (its own request too). */
const reload = () => location.replace(withToken(location.pathname));

const RETRY = { tries: 5, withinMs: 30000 };
/**
 * `send()`'s answer, tried again while the service says it is busy (429/503, after Retry-After with
 * some jitter) or cannot be reached, at most RETRY.tries times within RETRY.withinMs: the last answer
 * then (or the last network error). Only requests that are safe to repeat are sent through it.
 */
async function persist(send) {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    let res = null;
    let failure = null;
    try {
      res = await send();
      if (res.status !== 429 && res.status !== 503) return res;
    } catch (e) {
      failure = e;
    }
    const after = Number(res?.headers.get("Retry-After"));
    const waitMs = (Number.isFinite(after) && after > 0 ? after * 1000 : 1000) * (1 + Math.random() * 0.5);
    if (attempt >= RETRY.tries || Date.now() - started + waitMs > RETRY.withinMs) {
      if (res) return res;
      throw failure;
    }
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

function flash(button, text) {
  const label = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = label), 1500);
}

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

/** Shows the copy buttons (hidden without the script) and copies on a click. */
function showCopyButtons() {
  for (const button of document.querySelectorAll("button.copy")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        flash(button, "Copied");
      } catch {
        flash(button, "Select and copy it");
      }
    });
  }
}

// The deadline (page.ts's deadline()): counted down every second, shown in the buyer's own time.
// Before the pick it is the time to choose a network; the pick (below) opens the merchant's payment
// window, a new deadline that may be earlier or later: the page drawn after it says so once, aloud.
const expires = $("expires");
const left = $("time-left");
const phase = $("deadline")?.dataset.phase;
const PICKED = `stablegate.picked.${config.chargeId}`;
/** A sessionStorage call, or null where the browser refuses storage. */
const session = (call) => {
  try {
    return call();
  } catch {
    return null;
  }
};
const clock = (iso) => new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
const tick = () => {
  if (!expires) return;
  if (statusEl.dataset.status !== "PENDING") return $("deadline")?.remove();
  const s = Math.max(0, Math.floor((Date.parse(expires.getAttribute("datetime")) - Date.now()) / 1000));
  const h = Math.floor(s / 3600);
  const mmss = `${Math.floor((s % 3600) / 60)}:${String(s % 60).padStart(2, "0")}`;
  const time = h > 0 ? `${h}:${mmss.padStart(5, "0")}` : mmss;
  left.textContent = s === 0 ? "(time is up)" : `(${time} left${phase === "pick" ? " to choose" : ""})`;
};
const showDeadline = () => {
  if (!expires) return;
  expires.textContent = clock(expires.getAttribute("datetime"));
  tick();
};

/** Counts the deadline down, and says once, aloud, that a network was picked and its window is the new deadline. */
function startDeadline() {
  showDeadline();
  setInterval(tick, 1000);
  if (phase === "pay" && session(() => sessionStorage.getItem(PICKED))) {
    session(() => sessionStorage.removeItem(PICKED));
    // Filled once the live region is in place, so that screen readers announce it.
    setTimeout(() => {
      $("window-change").textContent =
        `Network picked: you now have ${config.paymentWindowMinutes} minutes to pay, until ${clock(expires.getAttribute("datetime"))}. ` +
        "The time to choose a network no longer applies.";
    }, 500);
  }
}

// Live status.
const query =
  "subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { status statusMessage amountRemaining amountOverpaid amountPending confirmationsRequired chainId expiresAt flushTxHash cancelUrl payments { amount status confirmations } } }";
const url = withToken(`${config.graphqlUrl}?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: config.chargeId }))}`);
const FINAL = ["COMPLETED", "EXPIRED", "CANCELLED"];
let source = null;
let retryMs = 1000;
/** Follows the charge's status over SSE, coming back after the stream ends until the payment is settled. */
function connect() {
  source = new EventSource(url);
  source.addEventListener("next", (e) => {
    retryMs = 1000;
    const result = JSON.parse(e.data);
    if (result.data) show(result.data.paymentSessionUpdated);
  });
  // The stream ended (server restart, a slow connection cut off) or the browser gave up on it:
  // come back, a little later each time, until the payment is settled one way or the other.
  const reconnect = () => {
    source.close();
    if (FINAL.includes(statusEl.dataset.status)) return;
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 30000);
  };
  source.addEventListener("complete", reconnect);
  source.addEventListener("error", () => source.readyState === EventSource.CLOSED && reconnect());
}

/** Draws the status the service sent, or the page again where what it shows no longer holds. */
function show(s) {
  // The chain was picked elsewhere, or a payment finished confirming and changed the amount due:
  // the page must be drawn again (new address, amount, QR code).
  const shown = config.shown;
  const waiting = toUnits(s.amountPending) !== 0n;
  if (shown.chainId !== s.chainId) {
    // Picked in another tab or on another device: the new deadline is announced here too.
    if (shown.chainId === null) session(() => sessionStorage.setItem(PICKED, "1"));
    return reload();
  }
  if (s.status === "PENDING" && !waiting && (shown.waiting || toUnits(s.amountRemaining) !== toUnits(shown.amountRemaining))) return reload();
  // While a payment is being confirmed, asking for money would invite paying twice.
  document.querySelector("section.pay")?.classList.toggle("waiting", waiting);
  statusEl.dataset.status = s.status;
  // Rewriting the same text would make screen readers announce it again.
  if (statusEl.textContent !== s.statusMessage) statusEl.textContent = s.statusMessage;
  if (expires && expires.getAttribute("datetime") !== s.expiresAt) {
    expires.setAttribute("datetime", s.expiresAt);
    showDeadline();
  }
  // Money beyond the amount: the buyer learns how much, and that the merchant was told (page.ts's words).
  const overpaid = $("overpaid");
  const excess = toUnits(s.amountOverpaid) === 0n ? "" : `You paid ${s.amountOverpaid} USDC more than asked. The merchant has been notified and can refund it.`;
  if (overpaid.textContent !== excess) overpaid.textContent = excess;
  overpaid.hidden = excess === "";
  $("payments").replaceChildren(
    ...s.payments.map((p) => {
      const li = document.createElement("li");
      li.textContent =
        p.status === "confirmed"
          ? `${p.amount} USDC confirmed`
          : `${p.amount} USDC seen, ${Math.min(p.confirmations, s.confirmationsRequired ?? 1)} of ${s.confirmationsRequired ?? 1} confirmations`;
      return li;
    }),
  );
  if (s.status !== "PENDING") document.querySelector("section.pay")?.remove();
  // Paid: leaving through the shop's cancel link is no longer the way back.
  if (s.status === "RECEIVED" || s.status === "COMPLETED") $("back-to-shop")?.parentElement.remove();
  const outcome = $("outcome");
  if (s.status === "COMPLETED") {
    source.close();
    outcome.replaceChildren();
    if (s.flushTxHash && config.chain?.explorerUrl)
      outcome.append(link(`${config.chain.explorerUrl}/tx/${s.flushTxHash}`, "View the settlement transaction"), " ");
    if (config.completedUrl) {
      outcome.append(link(config.completedUrl, "Return to the shop"));
      setTimeout(() => location.assign(config.completedUrl), 3000);
    }
  }
}

// The chain pick: the form's post, sent by the script so that a busy service is asked again rather
// than shown to the buyer. Picking twice is harmless (the second is told the chain is already
// picked and lands on the page as it is).
function offerChainPick() {
  const picker = $("picker");
  if (!picker) return;
  const button = picker.querySelector("button[type=submit]");
  const note = document.createElement("p");
  note.id = "picker-message";
  note.setAttribute("role", "alert");
  picker.append(note);
  picker.addEventListener("submit", async (e) => {
    e.preventDefault();
    button.disabled = true;
    note.replaceChildren();
    let res = null;
    try {
      res = await persist(() =>
        fetch(picker.action, { method: "POST", body: new URLSearchParams(new FormData(picker)), headers: tokenHeaders, redirect: "manual" }),
      );
    } catch {}
    // Picked: the answer sends the browser back to the page (drawn once, by reload()), which then
    // announces the new deadline.
    if (res?.type === "opaqueredirect" || res?.ok) {
      session(() => sessionStorage.setItem(PICKED, "1"));
      return reload();
    }
    if (res && res.status !== 429 && res.status !== 503) return picker.submit(); // the service's own answer, as without the script
    button.disabled = false;
    const again = document.createElement("button");
    again.type = "submit";
    again.className = "secondary";
    again.textContent = "Try again";
    note.replaceChildren(
      res ? "The service is very busy right now and could not save your choice. " : "The service could not be reached. Check your connection. ",
      again,
    );
  });
}

// Pay with wallet: a normal USDC transfer (the buyer pays the gas) or, when the service offers it
// (config.gasless), an EIP-3009 transferWithAuthorization the wallet signs and the service relays.
const payButton = $("pay-wallet");
const gaslessButton = $("pay-gasless");
const message = $("wallet-message");
const buttons = [payButton, gaslessButton].filter(Boolean);
const busy = (on) => buttons.forEach((b) => (b.disabled = on));

/** The wallet chooser and "Pay with <wallet>", and the payment without gas where the service offers it. */
function offerWalletPayment() {
  if (!payButton || !config.chain) return;
  const gasless = gaslessButton && config.gasless ? config.gasless : null;
  // The buttons name the chosen wallet; without gas first when offered, the normal transfer after it.
  const wallets = chooseWallets($("wallets"), {
    onChange: (wallet) => {
      nameButton(payButton, wallet, "Pay with ");
      payButton.hidden = false;
      if (gasless) {
        nameButton(gaslessButton, wallet, "Pay with ", " (no gas needed)");
        gaslessButton.hidden = false;
        payButton.classList.add("secondary");
      }
    },
  });
  payButton.addEventListener("click", async () => {
    const wallet = wallets.chosen().provider;
    busy(true);
    message.textContent = "Confirm in your wallet…";
    try {
      await transfer(wallet, await account(wallet));
    } catch (e) {
      message.textContent = explain(e);
      busy(false);
    }
  });
  if (gasless) offerGasless(wallets, gasless);
}

/** The wallet's account, on the charge's chain. */
async function account(wallet) {
  const chainHex = `0x${config.chain.chainId.toString(16)}`;
  const [from] = await wallet.request({ method: "eth_requestAccounts" });
  if ((await wallet.request({ method: "eth_chainId" })) !== chainHex) {
    await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chainHex }] });
  }
  return from;
}

async function checkBalance(wallet, from, units) {
  const balance = BigInt(await wallet.request({ method: "eth_call", params: [{ to: config.chain.usdc, data: `0x70a08231${word(from)}` }, "latest"] }));
  if (balance < units) {
    throw new Error(
      `Your wallet has ${fromUnits(balance)} USDC on ${config.chain.name}; this payment needs ${fromUnits(units)}. Top it up or pay from another wallet.`,
    );
  }
}

/** The normal payment: an ERC-20 transfer to the charge's address, sent (and paid for) by the wallet. */
async function transfer(wallet, from) {
  // What the page was drawn for: a different amount due redraws it (show()).
  const units = toUnits(config.shown.amountRemaining);
  await checkBalance(wallet, from, units);
  const hash = await wallet.request({
    method: "eth_sendTransaction",
    params: [{ from, to: config.chain.usdc, data: `0xa9059cbb${word(config.cloneAddress)}${units.toString(16).padStart(64, "0")}` }],
  });
  message.replaceChildren("Sent. ", txLink(hash));
}

/** Pay without gas: the wallet signs, the service sends it. */
function offerGasless(wallets, gasless) {
  const api = `${config.graphqlUrl.replace(/\/graphql$/, "")}/v1/public/charges/${encodeURIComponent(config.chargeId)}/authorizations`;
  gaslessButton.addEventListener("click", () => payWithoutGas(wallets.chosen().provider, gasless, api));
}

/** Has `wallet` sign a transferWithAuthorization and hands it to the service, or pays the normal way where the wallet cannot sign it. */
async function payWithoutGas(wallet, gasless, api) {
  busy(true);
  message.textContent = "Confirm in your wallet…";
  let fallback = false;
  try {
    const from = await account(wallet);
    await checkBalance(wallet, from, BigInt(gasless.maxValue));
    const typed = typedData(from, gasless);
    message.textContent = "Sign the payment in your wallet. No gas is needed: the service sends it.";
    let signature;
    try {
      signature = await wallet.request({ method: "eth_signTypedData_v4", params: [from, JSON.stringify(typed)] });
    } catch (e) {
      if (!unsupported(e)) throw e;
      // This wallet cannot sign it: pay the normal way, from now on.
      fallback = true;
      gaslessButton.hidden = true;
      payButton.classList.remove("secondary");
      message.textContent = "Your wallet cannot sign a payment without gas, so this is a normal transfer (it needs gas). Confirm in your wallet…";
      return await transfer(wallet, from);
    }
    message.textContent = "Sending your payment…";
    const { from: signer, value, validAfter, validBefore, nonce } = typed.message;
    const body = await submit(api, { from: signer, value, validAfter, validBefore, nonce, signature });
    if (body.status === "FAILED") throw new Error(`The payment without gas failed: ${body.error ?? "unknown reason"}. Nothing was taken; you can try again.`);
    if (body.txHash) {
      const hash = body.txHash;
      message.replaceChildren(
        "Payment sent without gas: ",
        config.chain.explorerUrl ? link(`${config.chain.explorerUrl}/tx/${hash}`, `${hash.slice(0, 10)}…`) : hash,
      );
    } else message.textContent = "Payment accepted: the service is sending it without gas. This page updates by itself.";
  } catch (e) {
    message.textContent = fallback ? `Your wallet cannot sign a payment without gas. ${explain(e)}` : explain(e);
    busy(false);
  }
}

/** EIP-712 typed data of a transferWithAuthorization paying what is due to the charge's address, valid for an hour. */
function typedData(from, gasless) {
  const nonce = `0x${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")}`;
  return {
    types: { EIP712Domain: TOKEN_DOMAIN_FIELDS, ...TRANSFER_WITH_AUTHORIZATION_TYPES },
    primaryType: "TransferWithAuthorization",
    domain: gasless.domain,
    message: {
      from,
      to: config.cloneAddress,
      value: gasless.maxValue,
      validAfter: "0",
      validBefore: String(Math.floor(Date.now() / 1000) + 3600),
      nonce,
    },
  };
}

/** Hands the signed authorization to the service; its answer, or an Error with the service's reason. */
async function submit(api, authorization) {
  let res;
  try {
    // The same authorization handed in twice gives one transaction: safe to send again.
    res = await persist(() =>
      fetch(api, { method: "POST", headers: { "Content-Type": "application/json", ...tokenHeaders }, body: JSON.stringify(authorization) }),
    );
  } catch {
    throw new Error("The payment could not reach the service. Check your connection and try again; nothing was taken.");
  }
  const body = await res.json().catch(() => null);
  if (res.ok && body) return body;
  if (res.status === 429 || res.status === 503)
    throw new Error("The service is too busy to take the payment right now. Nothing was taken; try again in a moment.");
  if (res.status >= 400 && res.status < 500 && body?.message) throw new Error(body.message);
  throw new Error(`The service could not take the payment right now (HTTP ${res.status}). Try again, or pay with a normal transfer.`);
}

/** Whether the wallet said it has no such method (EIP-1193 4200, JSON-RPC -32601, or in words). */
function unsupported(e) {
  if (e?.code === 4200 || e?.code === -32601) return true;
  return /method not found|not supported|unsupported method|does not support|not implemented|unknown method/i.test(e?.message ?? "");
}

function txLink(hash) {
  return config.chain.explorerUrl ? link(`${config.chain.explorerUrl}/tx/${hash}`, `Transaction ${hash.slice(0, 10)}…`) : `Transaction ${hash}`;
}

function explain(e) {
  if (e?.code === 4001) return "You rejected the request in your wallet. Nothing was sent.";
  if (e?.code === 4902) return `Your wallet does not know ${config.chain.name}. Add that network in your wallet, then try again.`;
  if (e?.code === -32002) return "Your wallet already has a request waiting. Open your wallet to answer it.";
  if (/insufficient funds/i.test(e?.message ?? ""))
    return `Your wallet cannot pay the network fee on ${config.chain.name}. Add some of its native token for gas.`;
  return e?.message ?? "The wallet could not send the payment.";
}

function word(address) {
  return address.toLowerCase().replace(/^0x/, "").padStart(64, "0");
}

/** A USDC amount of the service's (a decimal string) in base units. */
function toUnits(amount) {
  return parseUnits(amount, USDC_DECIMALS);
}

/** Base units as the service writes USDC amounts: 2 to 6 decimals. */
function fromUnits(units) {
  return formatUnits(units, USDC_DECIMALS, { minDecimals: 2 });
}

showCopyButtons();
startDeadline();
connect();
offerChainPick();
offerWalletPayment();
