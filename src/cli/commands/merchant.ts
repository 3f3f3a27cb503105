// `stablegate merchant create|update|show`.
import { createSchema, updateSchema } from "../../domain/merchant-requests.js";
import { createMerchant, describeMerchant, updateMerchant } from "../../domain/merchants.js";
import { OPERATOR_ACTOR } from "../../domain/security-events.js";
import { parseInput } from "../../domain/validation.js";
import { type Command, type Flags, UsageError } from "../command.js";
import { describeEndpoint, describeKey } from "../describe.js";

const create: Command = {
  names: ["merchant create"],
  usage: `  merchant create --name NAME [--fee-bps B] [--test-wallet 0x…] [--live-wallet 0x…]
                  [--test-webhook-url URL] [--live-webhook-url URL] [--json]
      Creates a merchant; prints its id, one API key and one JWT secret per mode and the
      webhook secrets of the URLs given (all shown once).`,
  async run({ config, flags, open, print }) {
    if (!flags.name) throw new UsageError("--name is required.");
    const { prisma, chains } = await open();
    const created = await createMerchant(prisma, parseInput(createSchema, merchantInput(flags)), { feeBps: config.feeBps, chains });
    const { merchant, apiKeys, jwtSecrets, webhookEndpoints } = created;
    const hook = (mode: "test" | "live") => {
      const e = webhookEndpoints[mode];
      return e ? `  ${mode} webhook: ${e.endpoint.url} (${e.endpoint.id})  secret ${e.secret}` : `  ${mode} webhook: (none)`;
    };
    print(
      [
        `Merchant ${merchant.id} "${merchant.name}" (fee ${merchant.feeBps} bps)`,
        "Store these now; they are not shown again:",
        `  test API key:    ${apiKeys.test.secret}   (${apiKeys.test.id})`,
        `  live API key:    ${apiKeys.live.secret}   (${apiKeys.live.id})`,
        `  test JWT secret: kid ${jwtSecrets.test.id}  secret ${jwtSecrets.test.secret}`,
        `  live JWT secret: kid ${jwtSecrets.live.id}  secret ${jwtSecrets.live.secret}`,
        `  test wallet: ${merchant.testWallet ?? "(none)"}   live wallet: ${merchant.liveWallet ?? "(none)"}`,
        hook("test"),
        hook("live"),
      ].join("\n"),
      created,
    );
  },
};

const update: Command = {
  names: ["merchant update"],
  usage: `  merchant update MERCHANT_ID [--name N] [--fee-bps B] [--test-wallet 0x…] [--live-wallet 0x…]
                  [--payment-window-minutes M] [--underpayment-tolerance-bps B] [--json]
      Pass "" to clear a wallet. --underpayment-tolerance-bps (0-1000): confirmed money at most that
      short of the amount completes new charges.`,
  async run({ flags, open, print, need }) {
    if (flags["test-webhook-url"] !== undefined || flags["live-webhook-url"] !== undefined) {
      throw new UsageError("Webhook URLs are endpoints with their own secrets: use 'stablegate webhooks create|update|delete'.");
    }
    const { prisma, chains } = await open();
    const merchant = await updateMerchant(prisma, need("MERCHANT_ID"), parseInput(updateSchema, merchantInput(flags)), chains, OPERATOR_ACTOR);
    print(`Updated ${merchant.id}.`, merchant);
  },
};

const show: Command = {
  names: ["merchant show"],
  usage: "  merchant show MERCHANT_ID [--json]",
  async run({ open, print, need }) {
    const { prisma } = await open();
    const shown = await describeMerchant(prisma, need("MERCHANT_ID"));
    const { merchant } = shown;
    const when = (d: Date | null) => (d ? ` revoked ${d.toISOString()}` : "");
    print(
      [
        `Merchant ${merchant.id} "${merchant.name}", fee ${merchant.feeBps} bps, payment window ${merchant.paymentWindowMinutes} min, underpayment tolerance ${merchant.underpaymentToleranceBps} bps`,
        `  test wallet: ${merchant.testWallet ?? "(none)"}   live wallet: ${merchant.liveWallet ?? "(none)"}`,
        "  API keys:",
        ...shown.apiKeys.map(describeKey),
        "  JWT secrets:",
        ...shown.jwtSecrets.map((s) => `    ${s.id}${when(s.revokedAt)}`),
        "  Webhook endpoints:",
        ...shown.webhookEndpoints.map(describeEndpoint),
      ].join("\n"),
      shown,
    );
  },
};

export const merchantCommands = [create, update, show];

/** CLI flags to merchant fields, still to be parsed; an empty string clears an optional setting. */
function merchantInput(v: Flags): Record<string, unknown> {
  const text = (x: unknown) => (x === undefined ? undefined : x === "" ? null : String(x));
  const number = (x: unknown) => (x === undefined ? undefined : Number(x));
  const input: Record<string, unknown> = {
    name: v.name,
    feeBps: number(v["fee-bps"]),
    paymentWindowMinutes: number(v["payment-window-minutes"]),
    underpaymentToleranceBps: number(v["underpayment-tolerance-bps"]),
    testWallet: text(v["test-wallet"]),
    liveWallet: text(v["live-wallet"]),
    testWebhookUrl: text(v["test-webhook-url"]),
    liveWebhookUrl: text(v["live-webhook-url"]),
  };
  return Object.fromEntries(Object.entries(input).filter(([, x]) => x !== undefined));
}
