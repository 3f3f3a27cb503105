// `stablegate devnet pay <chargeId> [amount] [--key sk_test_… [--late]]`: pays a test-mode charge from the
// devnet's funded test wallet, like a buyer would. It talks to the running service wherever it answers
// (instance.ts: PUBLIC_URL/PORT, else the address `npm start` recorded in DATA_DIR). Without a key it
// takes the buyer's public path (the chain pick, then a transfer from the address book in DATA_DIR), which
// pays only a PENDING charge; with a test key it asks the test helper (POST
// /v1/test_helpers/charges/:id/pay), which also pays an expired or cancelled charge late.
import { Wallet } from "ethers";
import { DEVNET_CHAIN_ID } from "../chain/anvil.js";
import { payFromTestWallet, readDevnetInfo } from "../chain/devnet.js";
import type { Config } from "../config.js";
import { formatAmount, parseAmount } from "../domain/money.js";
import { type InstanceAddress, instanceAddress, instanceFetch } from "./instance-fetch.js";

/** How to pay: the amount (default: what is still due), and a test key to pay through the test helper (`late` needs one). */
export interface DevnetPayOptions {
  amount?: string | undefined;
  apiKey?: string | undefined;
  late?: boolean;
}

/** Sends the amount of devnet USDC to the charge's payment address; returns what was done, in words. */
export async function payFromDevnet(config: Config, chargeId: string, options: DevnetPayOptions = {}): Promise<string> {
  const base = instanceAddress(config);
  if (options.apiKey) return payThroughTestHelper(base, chargeId, options.apiKey, options);
  if (options.late) throw new Error("--late expires the charge first, which needs your test key: add --key sk_test_… (or set STABLEGATE_API_KEY).");
  const info = readDevnetInfo(config.dataDir);
  const path = `/v1/public/charges/${encodeURIComponent(chargeId)}`;
  let { body: charge } = await instanceFetch<ChargeAnswer>(base, path);
  if (charge.status !== "PENDING") {
    throw new Error(
      `Charge ${chargeId} is ${charge.status}: without a key only a PENDING charge is paid, as a buyer would. ` +
        `To pay it late (charge.late_payment), give your test key: stablegate devnet pay ${chargeId} --key sk_test_… (or set STABLEGATE_API_KEY).`,
    );
  }
  if (charge.chainId === null) ({ body: charge } = await instanceFetch<ChargeAnswer>(base, `${path}/chain`, { body: { chainId: DEVNET_CHAIN_ID } }));
  if (charge.chainId !== DEVNET_CHAIN_ID) throw new Error(`Charge ${chargeId} is to be paid on chain ${charge.chainId}, not the devnet.`);
  const units = parseAmount(options.amount ?? charge.amountRemaining);
  if (units === null) throw new Error(`Invalid amount ${JSON.stringify(options.amount)}: use a decimal such as 25 or 12.50`);
  if (units === 0n) throw new Error(`Nothing is due on ${chargeId} (status ${charge.status}).`);

  const hash = await payFromTestWallet(info, charge.cloneAddress!, units);
  return `Paid ${formatAmount(units)} USDC to ${charge.cloneAddress} from ${new Wallet(info.payerKey).address} (tx ${hash}).`;
}

/** Pays through POST /v1/test_helpers/charges/:id/pay, which answers the charge once the transfer is mined. */
async function payThroughTestHelper(base: InstanceAddress, chargeId: string, apiKey: string, options: DevnetPayOptions): Promise<string> {
  const body = { ...(options.amount !== undefined && { amount: options.amount }), ...(options.late && { late: true }) };
  const path = `/v1/test_helpers/charges/${encodeURIComponent(chargeId)}/pay`;
  const { body: charge } = await instanceFetch<ChargeAnswer>(base, path, { body, key: apiKey });
  const sent = options.amount === undefined ? "what was due" : `${options.amount} USDC`;
  const late = charge.status === "PENDING" || charge.status === "RECEIVED" ? "" : " (late: charge.late_payment follows once it is confirmed)";
  return `Paid ${sent} to ${chargeId} from the devnet's test wallet; the charge is ${charge.status}${late}.`;
}

interface ChargeAnswer {
  chainId: number | null;
  cloneAddress: string | null;
  amountRemaining: string;
  status: string;
}
