// The subscription pages' script (an ES module). On the checkout: the wallet chooser (wallets.js:
// EIP-6963 wallets by name and icon, window.ethereum as a fallback), then connect, ask the service
// what to sign, have the wallet sign the USDC permit and the spend permission (eth_signTypedData_v4,
// each explained first), post both, and follow the status until the subscription starts (or show
// why it failed, so the buyer can try again). On the manage page: "Revoke on chain", a transaction
// the payer's own wallet sends, from the wallet chosen the same way.
import { chooseWallets, nameButton } from "./wallets.js";

const config = JSON.parse(document.getElementById("session").textContent);
const $ = (id) => document.getElementById(id);
const base = `${config.basePath}/subscribe/${encodeURIComponent(config.subscriptionId)}`;
const message = $("wallet-message");

const wallets = chooseWallets($("wallets"), {
  onChange: (wallet) => {
    if (config.page === "checkout") {
      nameButton($("subscribe"), wallet, "Subscribe with ");
      $("subscribe").disabled = false;
    } else if ($("revoke")) {
      nameButton($("revoke"), wallet, "Revoke with ");
      $("revoke").hidden = false;
    }
  },
  onNone: () => {
    if (message) message.textContent = "No browser wallet was found. Install or unlock one, then reload this page.";
  },
});

const hex = (n) => `0x${Number(n).toString(16)}`;

/** The wallet's account, on `chainId`. */
async function account(wallet, chainId) {
  const [from] = await wallet.request({ method: "eth_requestAccounts" });
  if ((await wallet.request({ method: "eth_chainId" })) !== hex(chainId)) {
    await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex(chainId) }] });
  }
  return from;
}

/** eth_signTypedData_v4's payload: the domain's type spelled out, as wallets want it. */
function typed(t) {
  const fields = [
    ["name", "string"],
    ["version", "string"],
    ["chainId", "uint256"],
    ["verifyingContract", "address"],
  ].filter(([name]) => t.domain[name] !== undefined);
  return { ...t, types: { EIP712Domain: fields.map(([name, type]) => ({ name, type })), ...t.types } };
}

function explain(e) {
  if (e?.code === 4001) return "You rejected the request in your wallet. Nothing was signed or sent.";
  if (e?.code === 4902) return "Your wallet does not know this network. Add it in your wallet, then try again.";
  if (e?.code === -32002) return "Your wallet already has a request waiting. Open your wallet to answer it.";
  return e?.message ?? "The wallet could not complete the request.";
}

/**
 * The service's answer as JSON, or an Error with its message. A read refused as busy (429/503) is
 * asked again after its Retry-After, a few times; a post is not (a second authorization is refused).
 */
async function call(url, init) {
  let res;
  for (let attempt = 1; ; attempt++) {
    try {
      res = await fetch(url, { ...init, headers: { Accept: "application/json", ...(init?.headers ?? {}) } });
    } catch {
      throw new Error("The service could not be reached. Check your connection and try again; nothing was taken.");
    }
    if (init?.method === "POST" || (res.status !== 429 && res.status !== 503) || attempt >= 4) break;
    const after = Number(res.headers.get("Retry-After"));
    await new Promise((resolve) => setTimeout(resolve, Math.min(Number.isFinite(after) && after > 0 ? after : 1, 10) * 1000));
  }
  const body = await res.json().catch(() => null);
  if (res.ok && body) return body;
  if (res.status === 429 || res.status === 503) throw new Error("The service is very busy right now. Nothing was taken; try again in a minute.");
  throw new Error(body?.message ?? `The service could not take this step (HTTP ${res.status}).`);
}

const STARTED = ["TRIALING", "ACTIVE", "PAST_DUE"];

/** Follows the subscription until it starts, or its authorization failed and can be given again. */
async function follow(status, button) {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    let s;
    try {
      s = await call(`${base}/status`);
    } catch {
      continue;
    }
    if (STARTED.includes(s.status)) {
      status.dataset.status = s.status;
      status.textContent =
        s.status === "TRIALING"
          ? "You are subscribed: your free trial has started. The first payment is taken when it ends."
          : "You are subscribed: the first payment was taken. You can close this page.";
      return;
    }
    if (s.status !== "INCOMPLETE") return location.reload();
    if (!s.authorized) {
      status.textContent = "Not authorized yet.";
      message.textContent = s.failure ?? "The subscription could not be started. Nothing was taken; you can try again.";
      $("authorize").hidden = false;
      button.disabled = false;
      return;
    }
  }
}

/** The checkout: the wallet signs the permit and the spend permission, the service gets both, the page follows the start. */
function offerCheckout() {
  const form = $("checkout");
  const button = $("subscribe");
  const status = $("status");
  if (config.starting) void follow(status, button);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const chainId = Number(new FormData(form).get("chainId"));
    const wallet = wallets.chosen()?.provider;
    if (!wallet || !chainId) return;
    button.disabled = true;
    try {
      await authorize(wallet, chainId);
      message.textContent = "";
      $("authorize").hidden = true;
      $("failure")?.remove();
      status.textContent = "Your authorization was received: the subscription is being started on chain. This page updates by itself.";
      void follow(status, button);
    } catch (err) {
      message.textContent = explain(err);
      button.disabled = false;
    }
  });
}

/** Asks the service what to sign on `chainId`, has `wallet` sign the permit and the spend permission (each explained first), and posts both. */
async function authorize(wallet, chainId) {
  message.textContent = "Connect your wallet…";
  const payer = await account(wallet, chainId);
  const ask = await call(`${base}/authorization?chainId=${chainId}&payer=${encodeURIComponent(payer)}`);
  message.textContent = `Sign in your wallet. ${ask.words.permit}`;
  const permitSignature = await wallet.request({ method: "eth_signTypedData_v4", params: [payer, JSON.stringify(typed(ask.permit))] });
  message.textContent = `Sign in your wallet. ${ask.words.permission}`;
  const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [payer, JSON.stringify(typed(ask.permission))] });
  message.textContent = "Sending your authorization…";
  await call(`${base}/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      chainId,
      payer,
      permission: ask.permission.message,
      signature,
      permit: { value: ask.permit.message.value, deadline: ask.permit.message.deadline, signature: permitSignature },
    }),
  });
}

/** The manage page's "Revoke on chain": a transaction the payer's own wallet sends. */
function offerRevoke() {
  const button = $("revoke");
  button.addEventListener("click", async () => {
    const wallet = wallets.chosen()?.provider;
    if (!wallet) return;
    button.disabled = true;
    try {
      message.textContent = "Connect your wallet…";
      const from = await account(wallet, config.chainId);
      if (from.toLowerCase() !== config.payer.toLowerCase()) {
        throw new Error(`Connect the wallet that pays this subscription (${config.payer}); this one is ${from}.`);
      }
      message.textContent = "Confirm the revoke transaction in your wallet…";
      const hash = await wallet.request({ method: "eth_sendTransaction", params: [{ from, to: config.contract, data: config.revokeData }] });
      message.textContent = `Revoke sent: transaction ${hash}. Once it is mined, no payment can be taken any more; this subscription is then canceled.`;
    } catch (err) {
      message.textContent = explain(err);
      button.disabled = false;
    }
  });
}

if (config.page === "checkout") offerCheckout();
else if (config.page === "manage" && $("revoke")) offerRevoke();
