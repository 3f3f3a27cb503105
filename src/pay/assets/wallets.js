// The hosted pages' wallet chooser, imported by every page script that uses a wallet (pay.js,
// subscribe.js). Wallets are found by EIP-6963: each announces its name and icon, and the buyer
// picks one among them (radio buttons, shown when there are two or more); a page's buttons then name
// the chosen wallet. When none announces itself, the EIP-1193 provider at window.ethereum stands in.
// The choice is remembered for the browser tab's session, by the wallet's reverse-DNS id.

const REMEMBERED = "stablegate.wallet";
/** How long wallets get to announce themselves before window.ethereum is tried instead. */
const WAIT_MS = 400;
/** An icon is a data: URI of an image (EIP-6963); anything else is not shown. */
const ICON = /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i;

/**
 * Finds the browser's wallets and lets the buyer choose one in `host` (the page's
 * `<fieldset id="wallets">`, page.ts's walletChooser()). `onChange(wallet)` hears of the chosen
 * wallet (`{ name, icon, rdns, provider }`) each time it changes, the first time once one is found;
 * `onNone()` once when none was found. Returns `chosen()`, the chosen wallet or null.
 */
export function chooseWallets(host, { onChange, onNone = () => {} }) {
  /** The wallets found, by their announced uuid. */
  const wallets = new Map();
  let chosen = null;
  let fallback = false;

  const remembered = () => {
    try {
      return sessionStorage.getItem(REMEMBERED);
    } catch {
      return null; // storage refused (privacy settings): nothing is remembered
    }
  };
  const remember = (wallet) => {
    try {
      sessionStorage.setItem(REMEMBERED, wallet.rdns);
    } catch {}
  };

  function choose(wallet, byBuyer) {
    if (byBuyer) remember(wallet);
    if (chosen === wallet) return;
    chosen = wallet;
    for (const input of host?.querySelectorAll("input") ?? []) input.checked = input.value === wallet.uuid;
    onChange(wallet);
  }

  function add(info, provider) {
    const wallet = {
      uuid: String(info?.uuid ?? `wallet-${wallets.size}`),
      // A name is shown as text only, and kept short enough for a button.
      name:
        String(info?.name ?? "")
          .trim()
          .slice(0, 40) || "Browser wallet",
      icon: typeof info?.icon === "string" && ICON.test(info.icon) ? info.icon : null,
      rdns: String(info?.rdns ?? info?.uuid ?? "injected"),
      provider,
    };
    if (wallets.has(wallet.uuid) || [...wallets.values()].some((w) => w.provider === provider)) return;
    wallets.set(wallet.uuid, wallet);
    draw();
    if (!chosen || wallet.rdns === remembered()) choose(wallet, false);
  }

  /** The radio buttons, one per wallet with its icon and name; the fieldset stays hidden for a single wallet. */
  function draw() {
    if (!host) return;
    const list = host.querySelector("ul");
    list.replaceChildren(
      ...[...wallets.values()].map((wallet) => {
        const input = document.createElement("input");
        input.type = "radio";
        input.name = "wallet";
        input.value = wallet.uuid;
        input.checked = wallet === chosen;
        input.addEventListener("change", () => input.checked && choose(wallet, true));
        const label = document.createElement("label");
        label.append(input, " ", walletName(wallet));
        const item = document.createElement("li");
        item.append(label);
        return item;
      }),
    );
    host.hidden = wallets.size < 2;
  }

  window.addEventListener("eip6963:announceProvider", (e) => {
    if (!e.detail?.provider) return;
    // A wallet that announces itself usually injected window.ethereum too: one entry, by its own name.
    if (fallback) {
      wallets.clear();
      chosen = null;
      fallback = false;
    }
    add(e.detail.info, e.detail.provider);
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  setTimeout(() => {
    if (wallets.size > 0) return;
    if (!window.ethereum) return onNone();
    fallback = true;
    add({ uuid: "injected", name: injectedName(window.ethereum), rdns: "injected" }, window.ethereum);
  }, WAIT_MS);

  return { chosen: () => chosen };
}

/** A wallet's icon (when it gave one) and name, for a label or a button. */
export function walletName(wallet) {
  const name = document.createElement("span");
  name.className = "wallet-name";
  if (wallet.icon) {
    const icon = document.createElement("img");
    icon.src = wallet.icon;
    icon.alt = "";
    icon.width = 20;
    icon.height = 20;
    icon.className = "wallet-icon";
    name.append(icon);
  }
  name.append(wallet.name);
  return name;
}

/** Makes `button` read `${before}<icon><name>${after}` for `wallet` (the icon's margin spaces it). */
export function nameButton(button, wallet, before, after = "") {
  button.replaceChildren(before, walletName(wallet), after);
}

/** What a wallet that injected window.ethereum without announcing itself is called. */
function injectedName(provider) {
  if (provider.isRabby) return "Rabby";
  if (provider.isCoinbaseWallet) return "Coinbase Wallet";
  if (provider.isBraveWallet) return "Brave Wallet";
  if (provider.isMetaMask) return "MetaMask";
  return "Browser wallet";
}
