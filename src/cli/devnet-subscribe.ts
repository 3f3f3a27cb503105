// `stablegate devnet subscribe <subscriptionId> [--key sk_test_…]`: authorizes a test-mode
// subscription from the devnet's funded test wallet, as a buyer on the checkout page would: it asks
// the page's endpoint what to sign, signs the USDC permit and the spend permission with the test
// wallet's key, and posts them. Works while the service runs (the engine then starts it on chain);
// with the merchant's key it also prints the manage link, which only the API shows.
import { Wallet } from "ethers";
import { readDevnetInfo } from "../chain/devnet.js";
import type { Config } from "../config.js";
import { runningInstanceUrl } from "../instance.js";

interface Typed {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  message: Record<string, string>;
}

/** Signs and posts the subscription's authorization from the devnet's test wallet; what it did, in words. */
export async function subscribeFromDevnet(config: Config, subscriptionId: string, apiKey?: string): Promise<string> {
  const info = readDevnetInfo(config.dataDir);
  const wallet = new Wallet(info.payerKey);
  const instance = runningInstanceUrl(config);
  // The pay pages are under the running instance unless PAYMENT_BASE_URL puts them elsewhere.
  const pages = config.paymentBaseUrl === `${config.publicUrl}/pay` ? `${instance}/pay` : config.paymentBaseUrl;
  const base = `${pages}/subscribe/${encodeURIComponent(subscriptionId)}`;
  const ask = (await request(`${base}/authorization?chainId=${info.chainId}&payer=${wallet.address}`)) as {
    permit: Typed;
    permission: Typed;
    words: { permit: string; permission: string };
  };
  const permitSignature = await wallet.signTypedData(ask.permit.domain, ask.permit.types, ask.permit.message);
  const signature = await wallet.signTypedData(ask.permission.domain, ask.permission.types, ask.permission.message);
  await request(`${base}/authorize`, {
    chainId: info.chainId,
    payer: wallet.address,
    permission: ask.permission.message,
    signature,
    permit: { value: ask.permit.message.value, deadline: ask.permit.message.deadline, signature: permitSignature },
  });
  const lines = [
    `Authorized ${subscriptionId} from the devnet's test wallet ${wallet.address}:`,
    `  signed the USDC permit: ${ask.words.permit}`,
    `  signed the permission: ${ask.words.permission}`,
    `The service now starts it on chain (TRIALING or ACTIVE once its transaction is mined).`,
  ];
  if (apiKey) {
    const sub = (await request(`${instance}/v1/subscriptions/${encodeURIComponent(subscriptionId)}`, undefined, apiKey)) as { manageUrl: string };
    lines.push(`Manage it at ${sub.manageUrl}`);
  } else lines.push(`Its manage link is the subscription's manageUrl (GET /v1/subscriptions/${subscriptionId}, or pass --key sk_test_… here).`);
  return lines.join("\n");
}

async function request(url: string, body?: unknown, apiKey?: string): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json", ...(apiKey && { "x-api-key": apiKey }) };
  const init = body === undefined ? { headers } : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch(url, init).catch((e: Error) => {
    throw new Error(`Cannot reach the service at ${url} (${e.message}); is npm start running?`);
  });
  const json = (await res.json().catch(() => null)) as { message?: string } | null;
  if (!res.ok || json === null) throw new Error(json?.message ?? `HTTP ${res.status} from ${url}`);
  return json;
}
