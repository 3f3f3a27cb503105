// The hosted payment page's script: copy buttons, the countdown, live status over SSE
// (paymentSessionUpdated), and "Pay with wallet" (EIP-6963 discovery, EIP-1193 fallback).
// Without it the page still shows everything needed to pay.
"use strict";

(() => {
  const config = JSON.parse(document.getElementById("session").textContent);
  const $ = (id) => document.getElementById(id);
  const statusEl = $("status");

  // Copy buttons.
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
  function flash(button, text) {
    const label = button.textContent;
    button.textContent = text;
    setTimeout(() => (button.textContent = label), 1500);
  }

  // Countdown to expiry.
  const expires = $("expires");
  const left = $("time-left");
  const tick = () => {
    const ms = Date.parse(expires.getAttribute("datetime")) - Date.now();
    if (statusEl.dataset.status !== "PENDING") return (left.textContent = "");
    const s = Math.max(0, Math.floor(ms / 1000));
    left.textContent = `(${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left)`;
  };
  tick();
  setInterval(tick, 1000);

  // Live status.
  const query =
    "subscription($id: ID!) { paymentSessionUpdated(chargeId: $id) { status statusMessage amountRemaining amountPending confirmationsRequired chainId expiresAt flushTxHash cancelUrl payments { amount status confirmations } } }";
  const url = `${config.graphqlUrl}?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ id: config.chargeId }))}`;
  const FINAL = ["COMPLETED", "EXPIRED", "CANCELLED"];
  let source = null;
  let retryMs = 1000;
  const connect = () => {
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
  };
  connect();

  function show(s) {
    // The chain was picked elsewhere, or a payment finished confirming and changed the amount due:
    // the page must be drawn again (new address, amount, QR code).
    const shown = config.shown;
    const waiting = s.amountPending !== "0.00";
    if (shown.chainId !== s.chainId) return location.reload();
    if (s.status === "PENDING" && !waiting && (shown.waiting || s.amountRemaining !== shown.amountRemaining)) return location.reload();
    // While a payment is being confirmed, asking for money would invite paying twice.
    document.querySelector("section.pay")?.classList.toggle("waiting", waiting);
    statusEl.dataset.status = s.status;
    // Rewriting the same text would make screen readers announce it again.
    if (statusEl.textContent !== s.statusMessage) statusEl.textContent = s.statusMessage;
    expires.setAttribute("datetime", s.expiresAt);
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
    } else if ((s.status === "EXPIRED" || s.status === "CANCELLED") && s.cancelUrl) {
      outcome.replaceChildren(link(s.cancelUrl, "Return to the shop"));
    }
  }

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  // Pay with wallet.
  const payButton = $("pay-wallet");
  const message = $("wallet-message");
  if (!payButton || !config.chain) return;
  const providers = [];
  window.addEventListener("eip6963:announceProvider", (e) => {
    providers.push(e.detail.provider);
    payButton.hidden = false;
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  setTimeout(() => {
    if (providers.length === 0 && window.ethereum) {
      providers.push(window.ethereum);
      payButton.hidden = false;
    }
  }, 300);

  payButton.addEventListener("click", async () => {
    const wallet = providers[0];
    const chainHex = `0x${config.chain.chainId.toString(16)}`;
    const units = toUnits($("remaining").textContent);
    payButton.disabled = true;
    message.textContent = "Confirm in your wallet…";
    try {
      const [from] = await wallet.request({ method: "eth_requestAccounts" });
      if ((await wallet.request({ method: "eth_chainId" })) !== chainHex) {
        await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chainHex }] });
      }
      const balance = BigInt(await wallet.request({ method: "eth_call", params: [{ to: config.chain.usdc, data: `0x70a08231${word(from)}` }, "latest"] }));
      if (balance < units) {
        throw new Error(
          `Your wallet has ${fromUnits(balance)} USDC on ${config.chain.name}; this payment needs ${fromUnits(units)}. Top it up or pay from another wallet.`,
        );
      }
      const hash = await wallet.request({
        method: "eth_sendTransaction",
        params: [{ from, to: config.chain.usdc, data: `0xa9059cbb${word(config.cloneAddress)}${units.toString(16).padStart(64, "0")}` }],
      });
      message.replaceChildren(
        "Sent. ",
        config.chain.explorerUrl ? link(`${config.chain.explorerUrl}/tx/${hash}`, `Transaction ${hash.slice(0, 10)}…`) : `Transaction ${hash}`,
      );
    } catch (e) {
      message.textContent = explain(e);
      payButton.disabled = false;
    }
  });

  function explain(e) {
    if (e?.code === 4001) return "You rejected the request in your wallet. Nothing was sent.";
    if (e?.code === 4902) return `Your wallet does not know ${config.chain.name}. Add that network in your wallet, then try again.`;
    if (e?.code === -32002) return "Your wallet already has a request waiting. Open your wallet to answer it.";
    if (/insufficient funds/i.test(e?.message ?? ""))
      return `Your wallet cannot pay the network fee on ${config.chain.name}. Add some of its native token for gas.`;
    return e?.message ?? "The wallet could not send the payment.";
  }
  const word = (address) => address.toLowerCase().replace(/^0x/, "").padStart(64, "0");
  const toUnits = (s) => {
    const [whole, frac = ""] = s.split(".");
    return BigInt(whole) * 1000000n + BigInt((frac + "000000").slice(0, 6));
  };
  const fromUnits = (u) =>
    `${u / 1000000n}.${String(u % 1000000n)
      .padStart(6, "0")
      .replace(/0{1,4}$/, "")}`;
})();
