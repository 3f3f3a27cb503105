// Merchant accounts and their credentials, managed by the `stablegate` settings command.
import { randomBytes } from "node:crypto";
import type { ChainSet } from "../chain/chains.js";
import type { Prisma } from "../db/client.js";
import type { Merchant } from "../generated/prisma/client.js";
import { createApiKey, listApiKeys, type NewApiKey } from "./api-keys.js";
import { type Confirmation, OPERATOR } from "./confirmation.js";
import { refuseDestination } from "./destinations.js";
import { AppError, notFound } from "./errors.js";
import { newId } from "./ids.js";
import { modeName } from "./scope.js";
import { type Actor, OPERATOR_ACTOR, recordSecurityEvent } from "./security-events.js";
import { securityNotice } from "./team-emails.js";
import type { MerchantRequest, MerchantSettingsUpdate, MerchantUpdate } from "./merchant-requests.js";
import { checkWebhookUrl, createWebhookEndpoint, type EndpointCreated, merchantWebhookEndpoints } from "./webhook-endpoints.js";
import type { Resolver } from "../webhooks/target-guard.js";

export type { Merchant };

/** A JWT signing secret: `id` is the `kid` callers put in the token header. */
export interface NewJwtSecret {
  id: string;
  secret: string;
  livemode: boolean;
}

/** What `merchant create` shows once: the merchant and its first credentials per mode. */
export interface MerchantCreated {
  merchant: Merchant;
  apiKeys: { test: NewApiKey; live: NewApiKey };
  jwtSecrets: { test: NewJwtSecret; live: NewJwtSecret };
  /** The webhook endpoints asked for at creation, with their secrets. */
  webhookEndpoints: { test: EndpointCreated | null; live: EndpointCreated | null };
}

/**
 * Creates a merchant with a test and a live API key and JWT secret, and a webhook endpoint per mode
 * whose URL is given. A bad URL, or a wallet money cannot be spent from (`refuseWallets`), creates
 * nothing; `defaults.chains` are the enabled chains whose contracts a wallet may not be.
 */
export async function createMerchant(
  prisma: Prisma,
  { testWebhookUrl, liveWebhookUrl, ...data }: MerchantRequest,
  defaults: { feeBps: number; chains?: ChainSet },
  resolve?: Resolver,
): Promise<MerchantCreated> {
  // Wallets and URLs first: they are the part that can still be refused.
  await refuseWallets(prisma, data, defaults.chains);
  const urls = { test: testWebhookUrl ?? null, live: liveWebhookUrl ?? null };
  for (const [mode, url] of Object.entries(urls)) {
    if (url !== null) await checkWebhookUrl(url, mode === "live", resolve, mode === "live" ? "liveWebhookUrl" : "testWebhookUrl");
  }
  const merchant = await prisma.merchant.create({ data: { id: newId("mer"), ...data, feeBps: data.feeBps ?? defaults.feeBps } });
  const endpoint = (url: string | null, livemode: boolean) =>
    url === null ? null : createWebhookEndpoint(prisma, { merchantId: merchant.id, livemode }, { url, events: [] }, OPERATOR_ACTOR, resolve);
  const [test, live, jwtTest, jwtLive, hookTest, hookLive] = await Promise.all([
    createApiKey(prisma, merchant.id, false, [], OPERATOR, OPERATOR_ACTOR),
    createApiKey(prisma, merchant.id, true, [], OPERATOR, OPERATOR_ACTOR),
    createJwtSecret(prisma, merchant.id, false),
    createJwtSecret(prisma, merchant.id, true),
    endpoint(urls.test, false),
    endpoint(urls.live, true),
  ]);
  return { merchant, apiKeys: { test, live }, jwtSecrets: { test: jwtTest, live: jwtLive }, webhookEndpoints: { test: hookTest, live: hookLive } };
}

/**
 * 400 `parameter_invalid` naming the field when a settlement wallet given is an address money cannot
 * be spent from: a charge's deposit address, a factory or token contract of `chains` or the registry,
 * the zero address (domain/destinations.ts). A payout there would be lost, or paid into a charge again.
 */
async function refuseWallets(prisma: Prisma, data: { testWallet?: string | null; liveWallet?: string | null }, chains: ChainSet | undefined): Promise<void> {
  for (const param of ["testWallet", "liveWallet"] as const) {
    const wallet = data[param];
    if (wallet) await refuseDestination(prisma, wallet, { kind: "settlement wallet", param, chains });
  }
}

/** Changes a merchant's settings (a refused wallet changes nothing: `refuseWallets`); `null` clears a wallet. A wallet changed is `actor`'s in the history. */
export async function updateMerchant(prisma: Prisma, id: string, data: MerchantUpdate, chains: ChainSet | undefined, actor: Actor): Promise<Merchant> {
  await refuseWallets(prisma, data, chains);
  return writeMerchant(prisma, id, data, actor);
}

/**
 * Writes `data` and, in the same transaction, tells the team of each settlement wallet it changes
 * (old and new address) and records the change as `actor`'s in the security history.
 */
async function writeMerchant(prisma: Prisma, id: string, data: MerchantUpdate | MerchantSettingsUpdate, actor: Actor): Promise<Merchant> {
  return prisma.$transaction(async (tx) => {
    const [before] = await tx.$queryRaw<{ test_wallet: string | null; live_wallet: string | null }[]>`
      SELECT test_wallet, live_wallet FROM merchants WHERE id = ${id} FOR UPDATE`;
    if (!before) throw notFound("merchant", id);
    const merchant = await tx.merchant.update({ where: { id }, data });
    for (const [livemode, was, now] of [
      [false, before.test_wallet, merchant.testWallet],
      [true, before.live_wallet, merchant.liveWallet],
    ] as const) {
      if (was === now) continue;
      await securityNotice(tx, id, {
        subject: `The ${modeName(livemode)}-mode settlement wallet was changed`,
        paragraphs: [`Payouts of ${modeName(livemode)}-mode charges created from now on go to the new address.`],
        facts: [
          ["Old address", was ?? "none"],
          ["New address", now ?? "none"],
        ],
        livemode,
      });
      await recordSecurityEvent(tx, id, "wallet_changed", actor, { mode: modeName(livemode), from: was, to: now });
    }
    return merchant;
  });
}

/**
 * Changes what a merchant's dashboard may: name, settlement wallets (`null` clears one), payment
 * window, underpayment tolerance, and the emails to its buyers (their settings and Reply-To). Open charges keep the wallet and tolerance they were created with.
 * A change of wallet redirects the money, so it first awaits `confirmWalletChange` (a re-authentication,
 * domain/reauthentication.ts); a wallet sent as it already is changes nothing and needs none. A
 * wallet changed is recorded as `actor`'s in the security history.
 */
export async function updateMerchantSettings(
  prisma: Prisma,
  id: string,
  data: MerchantSettingsUpdate,
  confirmWalletChange: Confirmation,
  chains: ChainSet,
  actor: Actor,
): Promise<Merchant> {
  const current = await getMerchant(prisma, id);
  const changes = (field: "testWallet" | "liveWallet") => data[field] !== undefined && data[field] !== current[field];
  // Only a new wallet is checked (a form sends both), and before the password is asked for: a refused one needs no confirming.
  await refuseWallets(
    prisma,
    { testWallet: changes("testWallet") ? data.testWallet : undefined, liveWallet: changes("liveWallet") ? data.liveWallet : undefined },
    chains,
  );
  if (changes("testWallet") || changes("liveWallet")) await confirmWalletChange();
  return writeMerchant(prisma, id, data, actor);
}

/** A merchant or 404. */
export async function getMerchant(prisma: Prisma, id: string): Promise<Merchant> {
  const merchant = await prisma.merchant.findUnique({ where: { id } });
  if (!merchant) throw notFound("merchant", id);
  return merchant;
}

/** A merchant with its (non-secret) credential listing, for `merchant show`. */
export async function describeMerchant(prisma: Prisma, id: string) {
  const merchant = await getMerchant(prisma, id);
  const [apiKeys, jwtSecrets, webhookEndpoints] = await Promise.all([
    listApiKeys(prisma, id),
    listJwtSecrets(prisma, id),
    merchantWebhookEndpoints(prisma, id),
  ]);
  // Secrets are shown once, when made: never in a listing.
  return { merchant, apiKeys, jwtSecrets, webhookEndpoints: webhookEndpoints.map(({ secret: _, previousSecret: __, ...e }) => e) };
}

/** Creates an HS256 secret for customer JWTs in one mode. */
export async function createJwtSecret(prisma: Prisma, merchantId: string, livemode: boolean): Promise<NewJwtSecret> {
  const id = newId(livemode ? "jwk_live" : "jwk_test");
  const secret = `jws_${modeName(livemode)}_${randomBytes(32).toString("base64url")}`;
  await prisma.jwtSecret.create({ data: { id, merchantId, livemode, secret } });
  return { id, secret, livemode };
}

/** A merchant's JWT secrets, oldest first, without the key material. */
export function listJwtSecrets(prisma: Prisma, merchantId: string) {
  return prisma.jwtSecret.findMany({
    where: { merchantId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, livemode: true, createdAt: true, revokedAt: true },
  });
}

/** Revokes a JWT secret (only `merchantId`'s when given); tokens signed with it stop verifying at once. */
export async function revokeJwtSecret(prisma: Prisma, id: string, merchantId?: string): Promise<void> {
  const { count } = await prisma.jwtSecret.updateMany({ where: { id, merchantId, revokedAt: null }, data: { revokedAt: new Date() } });
  if (count === 0) throw new AppError("resource_missing", `No active JWT secret '${id}'`, "id");
}
