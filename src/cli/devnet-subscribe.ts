// `stablegate devnet subscribe <subscriptionId> [--key sk_test_…]`: authorizes a test-mode
// subscription from the devnet's funded test wallet, as a buyer on the checkout page would: it asks
// the page's endpoint what to sign, signs the USDC permit and the spend permission with the test
// wallet's key, and posts them. Works while the service runs (the engine then starts it on chain);
// with the merchant's key it also prints the manage link, which only the API shows.
import { Wallet } from "ethers";
import { readDevnetInfo } from "../chain/devnet.js";
import type { Config } from "../config.js";
import { type InstanceAddress, instanceAddress, instanceFetch } from "./instance-fetch.js";

interface Typed {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  message: Record<string, string>;
}

/** Signs and posts the subscription's authorization from the devnet's test wallet; what it did, in words. */
export async function subscribeFromDevnet(config: Config, subscriptionId: string, apiKey?: string): Promise<string> {
  const info = readDevnetInfo(config.dataDir);
  const wallet = new Wallet(info.payerKey);
  const instance = instanceAddress(config);
  // The pay pages are under the running instance unless PAYMENT_BASE_URL puts them elsewhere.
  const pages: InstanceAddress =
    config.paymentBaseUrl === `${config.publicUrl}/pay`
      ? { ...instance, baseUrl: `${instance.baseUrl}/pay` }
      : { baseUrl: config.paymentBaseUrl, chosenBy: "PAYMENT_BASE_URL chose this address" };
  const path = `/subscribe/${encodeURIComponent(subscriptionId)}`;
  const { body: ask } = await instanceFetch<{ permit: Typed; permission: Typed; words: { permit: string; permission: string } }>(
    pages,
    `${path}/authorization?chainId=${info.chainId}&payer=${wallet.address}`,
  );
  const permitSignature = await wallet.signTypedData(ask.permit.domain, ask.permit.types, ask.permit.message);
  const signature = await wallet.signTypedData(ask.permission.domain, ask.permission.types, ask.permission.message);
  const authorization = {
    chainId: info.chainId,
    payer: wallet.address,
    permission: ask.permission.message,
    signature,
    permit: { value: ask.permit.message.value, deadline: ask.permit.message.deadline, signature: permitSignature },
  };
  await instanceFetch(pages, `${path}/authorize`, { body: authorization });
  const lines = [
    `Authorized ${subscriptionId} from the devnet's test wallet ${wallet.address}:`,
    `  signed the USDC permit: ${ask.words.permit}`,
    `  signed the permission: ${ask.words.permission}`,
    `The service now starts it on chain (TRIALING or ACTIVE once its transaction is mined).`,
  ];
  if (apiKey) {
    const { body: sub } = await instanceFetch<{ manageUrl: string }>(instance, `/v1/subscriptions/${encodeURIComponent(subscriptionId)}`, { key: apiKey });
    lines.push(`Manage it at ${sub.manageUrl}`);
  } else lines.push(`Its manage link is the subscription's manageUrl (GET /v1/subscriptions/${subscriptionId}, or pass --key sk_test_… here).`);
  return lines.join("\n");
}
