// `stablegate devnet pay <chargeId> [amount]`: pays a test-mode charge from the devnet's funded test
// wallet, like a buyer would. Works while the service runs: it reads the charge through the public
// endpoint and the devnet's address book from DATA_DIR.
import { Wallet } from "ethers";
import { DEVNET_CHAIN_ID } from "../chain/anvil.js";
import { payFromTestWallet, readDevnetInfo } from "../chain/devnet.js";
import type { Config } from "../config.js";
import { formatAmount, parseAmount } from "../domain/money.js";

/** Sends `amount` (default: what is still due) of devnet USDC to the charge's payment address. */
export async function payFromDevnet(config: Config, chargeId: string, amount?: string): Promise<string> {
  const info = readDevnetInfo(config.dataDir);
  const url = `${config.publicUrl}/v1/public/charges/${encodeURIComponent(chargeId)}`;
  let charge = await request(url);
  if (charge.chainId === null) charge = await request(`${url}/chain`, { chainId: DEVNET_CHAIN_ID });
  if (charge.chainId !== DEVNET_CHAIN_ID) throw new Error(`Charge ${chargeId} is to be paid on chain ${charge.chainId}, not the devnet.`);
  const units = parseAmount(amount ?? charge.amountRemaining);
  if (units === null) throw new Error(`Invalid amount ${JSON.stringify(amount)}: use a decimal such as 25 or 12.50`);
  if (units === 0n) throw new Error(`Nothing is due on ${chargeId} (status ${charge.status}).`);

  const hash = await payFromTestWallet(info, charge.cloneAddress!, units);
  return `Paid ${formatAmount(units)} USDC to ${charge.cloneAddress} from ${new Wallet(info.payerKey).address} (tx ${hash}).`;
}

interface PublicView {
  chainId: number | null;
  cloneAddress: string | null;
  amountRemaining: string;
  status: string;
}

async function request(url: string, body?: unknown): Promise<PublicView> {
  const res = await fetch(url, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).catch(
    (e: Error) => {
      throw new Error(`Cannot reach the service at ${url} (${e.message}); is npm start running?`);
    },
  );
  const json = (await res.json()) as PublicView & { message?: string };
  if (!res.ok) throw new Error(json.message ?? `HTTP ${res.status} from ${url}`);
  return json;
}
