// `stablegate devnet refund <refundId> --key sk_test_…`: pays a test-mode refund on the devnet from
// the merchant's settlement wallet, as the merchant would from their own wallet. The devnet lets us
// act as that wallet (anvil impersonation), and its USDC issuer tops the wallet up when it holds too
// little. Works while the service runs: the refund is read through the API with the merchant's key.
import { Contract, JsonRpcProvider, JsonRpcSigner, parseEther, Wallet } from "ethers";
import { readDevnetInfo } from "../chain/devnet.js";
import { circleUsdc, usdcInterface } from "../chain/usdc.js";
import type { Config } from "../config.js";
import { parseAmount } from "../domain/money.js";
import { instanceAddress, instanceFetch } from "./instance-fetch.js";

interface RefundView {
  id: string;
  status: string;
  amount: string;
  address: string | null;
  fromAddress: string;
  chainId: number;
  livemode: boolean;
}

/** Sends the refund's amount from its settlement wallet to its address on the devnet; the worker then completes it. */
export async function payRefundFromDevnet(config: Config, refundId: string, apiKey: string): Promise<string> {
  const info = readDevnetInfo(config.dataDir);
  const { body: refund } = await instanceFetch<RefundView>(instanceAddress(config), `/v1/refunds/${encodeURIComponent(refundId)}`, { key: apiKey });
  if (refund.livemode || refund.chainId !== info.chainId) throw new Error(`Refund ${refundId} is not a test refund on the devnet (chain ${refund.chainId}).`);
  if (refund.status !== "AWAITING_PAYMENT" || !refund.address) {
    throw new Error(
      `Refund ${refundId} is ${refund.status}${refund.status === "AWAITING_ADDRESS" ? ": the buyer has not given an address yet (claimUrl)" : ""}.`,
    );
  }
  const units = parseAmount(refund.amount)!;
  const provider = new JsonRpcProvider(info.rpcUrl, info.chainId, { staticNetwork: true });
  try {
    const usdc = new Contract(info.usdc, usdcInterface, provider);
    const held = (await usdc.getFunction("balanceOf")(refund.fromAddress)) as bigint;
    if (held < units) {
      const mint = await circleUsdc(info.usdc, new Wallet(info.usdcIssuerKey, provider)).getFunction("mint")(refund.fromAddress, units - held);
      await mint.wait();
    }
    await provider.send("anvil_impersonateAccount", [refund.fromAddress]);
    let hash: string;
    try {
      await provider.send("anvil_setBalance", [refund.fromAddress, `0x${parseEther("1").toString(16)}`]);
      const wallet = new JsonRpcSigner(provider, refund.fromAddress);
      const tx = await new Contract(info.usdc, usdcInterface, wallet).getFunction("transfer")(refund.address, units);
      await tx.wait();
      hash = tx.hash as string;
    } finally {
      await provider.send("anvil_stopImpersonatingAccount", [refund.fromAddress]);
    }
    return `Sent ${refund.amount} USDC from ${refund.fromAddress} to ${refund.address} (tx ${hash}); the refund completes once confirmed.`;
  } finally {
    provider.destroy();
  }
}
