// Paying from the merchant's own browser wallet (EIP-1193, found through EIP-6963 or window.ethereum):
// a plain USDC transfer the wallet signs and sends. The dashboard never sees a key.

interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

/** What to send: `units` of the chain's USDC from `from` to `to`. */
export interface WalletTransfer {
  chainId: number;
  chainName: string;
  usdc: string;
  from: string;
  to: string;
  units: bigint;
}

const providers: Eip1193[] = [];
if (typeof window !== "undefined") {
  window.addEventListener("eip6963:announceProvider", (e) => providers.push((e as CustomEvent<{ provider: Eip1193 }>).detail.provider));
  window.dispatchEvent(new Event("eip6963:requestProvider"));
}

/** The first browser wallet found, or null. */
export function browserWallet(): Eip1193 | null {
  return providers[0] ?? (window as unknown as { ethereum?: Eip1193 }).ethereum ?? null;
}

/** Sends the transfer from the wallet; resolves with its hash. Errors are worded for the merchant. */
export async function sendFromWallet(t: WalletTransfer): Promise<string> {
  const wallet = browserWallet();
  if (!wallet) throw new Error("No browser wallet found: install one (or send the transfer from your wallet app).");
  try {
    const [account] = (await wallet.request({ method: "eth_requestAccounts" })) as string[];
    if (account?.toLowerCase() !== t.from.toLowerCase()) {
      throw new Error(`Connect the settlement wallet ${t.from} to pay this: the wallet connected is ${account ?? "none"}.`);
    }
    const chainHex = `0x${t.chainId.toString(16)}`;
    if ((await wallet.request({ method: "eth_chainId" })) !== chainHex) {
      await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chainHex }] });
      // A wallet that did not switch would send the transfer on the wrong chain.
      if ((await wallet.request({ method: "eth_chainId" })) !== chainHex) throw new Error(`Switch your wallet to ${t.chainName}, then try again.`);
    }
    const word = (hex: string) => hex.toLowerCase().replace(/^0x/, "").padStart(64, "0");
    return (await wallet.request({
      method: "eth_sendTransaction",
      params: [{ from: account, to: t.usdc, data: `0xa9059cbb${word(t.to)}${word(t.units.toString(16))}` }],
    })) as string;
  } catch (e) {
    const code = (e as { code?: number }).code;
    if (code === 4001) throw new Error("You rejected the request in your wallet. Nothing was sent.");
    if (code === 4902) throw new Error(`Your wallet does not know ${t.chainName}: add that network, then try again.`);
    throw e;
  }
}
