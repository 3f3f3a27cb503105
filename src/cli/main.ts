#!/usr/bin/env node
// `stablegate`: the settings area. Manages merchants, API keys, JWT secrets, webhook endpoints and
// dashboard users directly in the database (never over the API), applies migrations, and lets an
// operator reconcile the ledger with the chains, sweep stray assets and mark charges reviewed.
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config.js";
import { backupEmbedded, restoreEmbedded } from "../db/backup.js";
import { DatabaseLockedError } from "../db/embedded-lock.js";
import { DatabaseMarkerError, openGuardedDatabase, recordDatabase } from "../db/marker.js";
import { ensureMigrated, MigrationError } from "../db/migrate.js";
import { createApiKey, revokeApiKey, rollApiKey } from "../domain/api-keys.js";
import { OPERATOR } from "../domain/confirmation.js";
import { payFromDevnet } from "./devnet-pay.js";
import { payRefundFromDevnet } from "./devnet-refund.js";
import { setUpDevnetAt } from "./devnet-setup.js";
import { AppError } from "../domain/errors.js";
import { createJwtSecret, createMerchant, describeMerchant, type MerchantInput, revokeJwtSecret, updateMerchant } from "../domain/merchants.js";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  merchantWebhookEndpoints,
  rotateWebhookSecret,
  updateWebhookEndpoint,
  type WebhookEndpoint,
  webhookEndpointScope,
} from "../domain/webhook-endpoints.js";
import { retryPayout } from "../domain/payouts.js";
import { markChargeReviewed } from "../domain/review.js";
import { getSweep, requestSweep, sweepResource } from "../domain/sweeps.js";
import { ChainSet } from "../chain/chains.js";
import { devnetChain, readDevnetInfo } from "../chain/devnet.js";
import { ChainRpc } from "../chain/rpc.js";
import { reconcileChain } from "../jobs/reconcile.js";
import { modeName } from "../domain/scope.js";
import { createUser, deleteUser, findUser, listUsers, resetPassword, type UserView } from "../domain/users.js";

const USAGE = `Usage: stablegate <command> [options]

Commands:
  merchant create --name NAME [--fee-bps B] [--test-wallet 0x…] [--live-wallet 0x…]
                  [--test-webhook-url URL] [--live-webhook-url URL] [--json]
      Creates a merchant; prints its id, one API key and one JWT secret per mode and the
      webhook secrets of the URLs given (all shown once).
  merchant update MERCHANT_ID [--name N] [--fee-bps B] [--test-wallet 0x…] [--live-wallet 0x…]
                  [--payment-window-minutes M] [--underpayment-tolerance-bps B] [--json]
      Pass "" to clear a wallet. --underpayment-tolerance-bps (0-1000): confirmed money at most that
      short of the amount completes new charges.
  merchant show MERCHANT_ID [--json]
  keys create MERCHANT_ID --mode test|live [--ip-allowlist IP,CIDR…] [--json]
      A new API key (shown once); with --ip-allowlist it works only from those addresses, e.g.
      --ip-allowlist 203.0.113.7,198.51.100.0/24,2001:db8::/32.
  keys roll KEY_ID [--overlap-hours H]                   A new key like KEY_ID (shown once); KEY_ID keeps
                                                         working for H hours (default 24; 0 = stop now).
  keys revoke KEY_ID                                     Revokes an API key.
  users create MERCHANT_ID --email EMAIL [--json]       A dashboard user; the password (10+ characters)
                                                         is read from standard input.
  users list MERCHANT_ID [--json]
  users reset-password USER                              USER: usr_… or email. New password from standard
                                                         input; its sessions end.
  users delete USER                                      Deletes a user and ends its sessions.
  jwt create MERCHANT_ID --mode test|live [--json]      A new JWT secret for POST /v1/customers/jwt.
  jwt revoke JWK_ID                                      Revokes a JWT secret.
  webhooks create MERCHANT_ID --mode test|live --url URL [--events TYPE,TYPE…] [--json]
      A new endpoint; prints its signing secret (shown once). Without --events it gets every event.
      Live mode needs https and a public address.
  webhooks list MERCHANT_ID [--json]
  webhooks update WHEP_ID [--url URL] [--events TYPE,…|""]  ("" = every event)
  webhooks rotate WHEP_ID [--overlap-hours H]            A new secret (shown once); the old one keeps
                                                         signing too for H hours (default 24; 0 = stop now).
  webhooks disable WHEP_ID | webhooks enable WHEP_ID     Pauses deliveries; enabling sends what waited.
  webhooks delete WHEP_ID
  payouts retry CHARGE_ID                                Tries a stopped payout again (a charge whose
                                                         payoutBlockedReason is flush_failing).
  reconcile [--chain ID] [--json]                        Compares the ledger with each chain (clone balances,
                                                         recent transfers); exit 1 when they differ. Read-only:
                                                         safe while the service runs.
  sweep CHARGE_ID --token 0x…|eth [--chain ID] [--detach]
      Pays another token (or the chain's native coin) out of the charge's address to its merchant's
      wallet; the worker sends it. Waits for the transaction unless --detach.
  charges reviewed CHARGE_ID                             Marks a charge that needs review as reviewed.
  migrate                                                Applies pending database migrations.
  backup --out FILE                                      Copies the embedded database to FILE (stop the
                                                         service first; PostgreSQL: use pg_dump).
  restore FILE [--force]                                 Makes FILE the embedded database in DATA_DIR
                                                         (--force replaces the one there) once all of
                                                         it reads back; a bad file changes nothing.
  devnet pay CHARGE_ID [AMOUNT]                          Pays a test charge from the devnet's test wallet
                                                         (default: the amount still due; needs npm start).
  devnet refund REFUND_ID --key sk_test_…                Pays a test refund from the merchant's settlement
                                                         wallet on the devnet (needs npm start).
  devnet setup --rpc URL --out FILE [--wait S] [--if-present]
      Deploys USDC and the factory on the anvil at URL (once) and writes the chain settings API and
      worker processes load (SETTINGS_FILE); --if-present: an unknown host is no error (docker-compose.yml).

The database is DATABASE_URL when set, else the embedded one in DATA_DIR (default ./.data).`;

const options = {
  name: { type: "string" },
  "fee-bps": { type: "string" },
  "payment-window-minutes": { type: "string" },
  "underpayment-tolerance-bps": { type: "string" },
  "test-wallet": { type: "string" },
  "live-wallet": { type: "string" },
  "test-webhook-url": { type: "string" },
  "live-webhook-url": { type: "string" },
  mode: { type: "string" },
  url: { type: "string" },
  events: { type: "string" },
  "ip-allowlist": { type: "string" },
  email: { type: "string" },
  "overlap-hours": { type: "string" },
  rpc: { type: "string" },
  out: { type: "string" },
  wait: { type: "string" },
  "if-present": { type: "boolean", default: false },
  key: { type: "string" },
  chain: { type: "string" },
  token: { type: "string" },
  detach: { type: "boolean", default: false },
  force: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

class UsageError extends Error {}
/** A command that could not be carried out; its message says why. */
class CommandError extends Error {}
/** Rethrows a failure as a CommandError (its message shown as is), keeping a locked database's own error. */
function commandError(e: Error): never {
  throw e instanceof DatabaseLockedError ? e : new CommandError(e.message);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [group, action, target] = positionals;
  if (values.help || !group) return void console.log(USAGE);
  const config = loadConfig();
  // The devnet command talks to the running service, not the database (which the service may hold).
  if (group === "backup" || group === "restore") {
    if (config.databaseUrl) throw new UsageError(`${group} is for the embedded database; back up PostgreSQL with pg_dump and restore with pg_restore.`);
    if (group === "backup") {
      if (!values.out) throw new UsageError("Usage: stablegate backup --out FILE");
      const bytes = await backupEmbedded(config.dataDir, values.out).catch(commandError);
      return void console.log(`Backed up the embedded database in ${config.dataDir} to ${values.out} (${bytes} bytes).`);
    }
    if (!action) throw new UsageError("Usage: stablegate restore FILE [--force]");
    await restoreEmbedded(config.dataDir, action, { force: values.force }).catch(commandError);
    return void console.log(`Restored ${action} into ${config.dataDir}.`);
  }
  if (group === "devnet" && action === "setup") {
    if (!values.rpc || !values.out) throw new UsageError("Usage: stablegate devnet setup --rpc URL --out FILE [--wait SECONDS] [--if-present]");
    const waitSeconds = Number(values.wait ?? 60);
    if (!Number.isInteger(waitSeconds) || waitSeconds < 0) throw new UsageError("--wait must be a whole number of seconds.");
    const done = await setUpDevnetAt(config, values.rpc, values.out, { waitSeconds, ifPresent: values["if-present"] }).catch((e: Error) => {
      throw new CommandError(e.message);
    });
    return void console.log(done);
  }
  if (group === "devnet" && action === "refund") {
    const key = values.key ?? process.env.STABLEGATE_API_KEY;
    if (!target || !key) throw new UsageError("Usage: stablegate devnet refund REFUND_ID --key sk_test_… (or STABLEGATE_API_KEY)");
    const done = await payRefundFromDevnet(config, target, key).catch((e: Error) => {
      throw new CommandError(e.message);
    });
    return void console.log(done);
  }
  if (group === "devnet") {
    if (action !== "pay" || !target) throw new UsageError("Usage: stablegate devnet pay CHARGE_ID [AMOUNT]");
    const done = await payFromDevnet(config, target, positionals[3]).catch((e: Error) => {
      throw new CommandError(e.message);
    });
    return void console.log(done);
  }
  const database = { url: config.databaseUrl, dataDir: config.dataDir };
  const db = await openGuardedDatabase(database, { poolSize: 2, applicationName: `stablegate-cli ${config.instanceId}` });
  try {
    // `migrate` always migrates; other commands too unless AUTO_MIGRATE is off (then `migrate` is the only migrator).
    const applied = await ensureMigrated(db, group === "migrate" || config.autoMigrate);
    await recordDatabase(database, db);
    const prisma = db.prisma;
    // Bytes (a merchant's logo) as base64, not as an object with a key per byte.
    const bytes = (_key: string, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v);
    const print = (human: string, data: unknown) => console.log(values.json ? JSON.stringify(data, bytes, 2) : human);
    const need = (what: string) => {
      if (!target) throw new UsageError(`Missing ${what}.`);
      return target;
    };
    const mode = () => {
      if (values.mode !== "test" && values.mode !== "live") throw new UsageError("--mode must be test or live.");
      return values.mode === "live";
    };
    // --overlap-hours as the domain parses it (absent: its default).
    const overlap = () => (values["overlap-hours"] === undefined ? {} : { overlapHours: values["overlap-hours"] });

    // `sweep` takes its charge where other commands take their action.
    switch (group === "sweep" ? group : `${group} ${action ?? ""}`.trim()) {
      case "migrate":
        return print(
          applied.length === 0
            ? "Database is up to date: no migration to apply."
            : `Applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}`).join("\n")}`,
          { ok: true, applied },
        );
      case "merchant create": {
        if (!values.name) throw new UsageError("--name is required.");
        const created = await createMerchant(prisma, merchantInput(values), { feeBps: config.feeBps });
        const { merchant, apiKeys, jwtSecrets, webhookEndpoints } = created;
        const hook = (mode: "test" | "live") => {
          const e = webhookEndpoints[mode];
          return e ? `  ${mode} webhook: ${e.endpoint.url} (${e.endpoint.id})  secret ${e.secret}` : `  ${mode} webhook: (none)`;
        };
        return print(
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
      }
      case "merchant update": {
        if (values["test-webhook-url"] !== undefined || values["live-webhook-url"] !== undefined) {
          throw new UsageError("Webhook URLs are endpoints with their own secrets: use 'stablegate webhooks create|update|delete'.");
        }
        const merchant = await updateMerchant(prisma, need("MERCHANT_ID"), merchantInput(values));
        return print(`Updated ${merchant.id}.`, merchant);
      }
      case "merchant show": {
        const shown = await describeMerchant(prisma, need("MERCHANT_ID"));
        const { merchant } = shown;
        const when = (d: Date | null) => (d ? ` revoked ${d.toISOString()}` : "");
        return print(
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
      }
      case "keys create": {
        const allowlist = values["ip-allowlist"]?.split(",").filter((entry) => entry.trim() !== "") ?? [];
        const key = await createApiKey(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id, mode(), allowlist, OPERATOR);
        const only = key.ipAllowlist.length ? `; only from ${key.ipAllowlist.join(", ")}` : "";
        return print(`${key.secret}   (${key.id}${only}; shown once)`, key);
      }
      case "keys roll": {
        const rolled = await rollApiKey(prisma, need("KEY_ID"), overlap(), OPERATOR);
        const until = rolled.previous.expiresAt.toISOString();
        return print(`${rolled.key.secret}   (${rolled.key.id}; shown once)\n${target} stops working at ${until}.`, rolled);
      }
      case "keys revoke":
        if (!(await revokeApiKey(prisma, need("KEY_ID")))) throw new UsageError(`No active API key ${target}.`);
        return print(`Revoked ${target}. Running servers stop accepting it within a few seconds.`, { id: target, revoked: true });
      case "users create": {
        const merchantId = (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id;
        const email = required(values.email, "--email");
        const user = await createUser(prisma, merchantId, { email, password: await readPassword() }, OPERATOR);
        return print(`User ${user.id} <${user.email}> can sign in at the dashboard.`, user);
      }
      case "users list": {
        const users = await listUsers(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id);
        const line = (u: UserView) => `    ${u.id}  ${u.email}${u.totpEnabled ? "  (two-factor)" : ""}`;
        return print(users.length ? users.map(line).join("\n") : "No users.", users);
      }
      case "users reset-password": {
        const user = await findUser(prisma, need("USER"));
        await resetPassword(prisma, user.id, await readPassword());
        return print(`New password set for ${user.email}; its sessions have ended.`, { id: user.id, passwordReset: true });
      }
      case "users delete": {
        const user = await findUser(prisma, need("USER"));
        await deleteUser(prisma, user, { keepOne: false });
        return print(`Deleted ${user.email} (${user.id}).`, { id: user.id, deleted: true });
      }
      case "jwt create": {
        const secret = await createJwtSecret(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id, mode());
        return print(`kid ${secret.id}  secret ${secret.secret}   (shown once)`, secret);
      }
      case "jwt revoke":
        await revokeJwtSecret(prisma, need("JWK_ID"));
        return print(`Revoked ${target}.`, { id: target, revoked: true });
      case "webhooks create": {
        const scope = { merchantId: (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id, livemode: mode() };
        const created = await createWebhookEndpoint(prisma, scope, { url: required(values.url, "--url"), events: eventList(values.events) });
        return print(`${describeEndpoint(created.endpoint)}\n  signing secret (shown once): ${created.secret}`, created);
      }
      case "webhooks list": {
        const endpoints = await merchantWebhookEndpoints(prisma, (await describeMerchant(prisma, need("MERCHANT_ID"))).merchant.id);
        const listed = endpoints.map(({ secret: _, previousSecret: __, ...e }) => e);
        return print(listed.length ? listed.map(describeEndpoint).join("\n") : "No webhook endpoints.", listed);
      }
      case "webhooks update":
      case "webhooks disable":
      case "webhooks enable": {
        const id = need("WHEP_ID");
        const update =
          action === "update"
            ? { ...(values.url !== undefined && { url: values.url }), ...(values.events !== undefined && { events: eventList(values.events) }) }
            : { status: action === "enable" ? "enabled" : "disabled" };
        const { secret: _, previousSecret: __, ...endpoint } = await updateWebhookEndpoint(prisma, await webhookEndpointScope(prisma, id), id, update);
        return print(describeEndpoint(endpoint), endpoint);
      }
      case "webhooks rotate": {
        const id = need("WHEP_ID");
        const rotated = await rotateWebhookSecret(prisma, await webhookEndpointScope(prisma, id), id, overlap());
        const until = rotated.endpoint.previousSecretExpiresAt;
        return print(
          `New signing secret (shown once): ${rotated.secret}\n${until ? `The old secret also signs until ${until.toISOString()}.` : "The old secret no longer signs."}`,
          { id: rotated.endpoint.id, secret: rotated.secret, previousSecretExpiresAt: until },
        );
      }
      case "webhooks delete": {
        const id = need("WHEP_ID");
        await deleteWebhookEndpoint(prisma, await webhookEndpointScope(prisma, id), id);
        return print(`Deleted ${target}.`, { id: target, deleted: true });
      }
      case "payouts retry": {
        const charge = await retryPayout(prisma, { paymentBaseUrl: config.paymentBaseUrl }, need("CHARGE_ID"));
        const state = charge.payoutBlockedReason
          ? `still blocked (${charge.payoutBlockedReason}); checked again on the next round`
          : "the worker tries it on its next round";
        return print(`Payout of ${charge.id}: ${state}.`, { id: charge.id, payoutBlockedReason: charge.payoutBlockedReason });
      }
      case "reconcile": {
        const chainId = values.chain === undefined ? undefined : Number(values.chain);
        const all = enabledChains(config).all();
        const chosen = chainId === undefined ? all : all.filter((c) => c.chainId === chainId);
        if (chosen.length === 0) throw new UsageError(chainId === undefined ? "No chain is enabled." : `Chain ${values.chain} is not enabled.`);
        const results = [];
        for (const chain of chosen) {
          const rpc = new ChainRpc(chain.chainId, chain.rpcUrls);
          try {
            results.push(await reconcileChain(prisma, rpc, chain));
          } finally {
            rpc.destroy();
          }
        }
        const differences = results.flatMap((r) => r.differences);
        if (values.json) console.log(JSON.stringify({ differences }, null, 2));
        else {
          for (const r of results) {
            const at = r.block === null ? "not indexed yet" : `block ${r.block}`;
            console.log(
              `Chain ${r.chainId} (${at}): ${r.checked} addresses and ${r.transfersChecked} recent transfers checked, ${r.differences.length} differences.`,
            );
          }
          for (const d of differences) console.log(`  ${d.chargeId}: ${d.message}`);
        }
        if (differences.length > 0) process.exitCode = 1;
        return;
      }
      case "sweep": {
        const chargeId = action;
        if (!chargeId || !values.token) throw new UsageError("Usage: stablegate sweep CHARGE_ID --token 0x…|eth [--chain ID] [--detach]");
        const input = { token: values.token, ...(values.chain !== undefined && { chainId: Number(values.chain) }) };
        const sweep = await requestSweep(prisma, enabledChains(config), null, chargeId, input);
        // No worker can run on the embedded database while we hold it: waiting could only time out.
        if (values.detach || db.kind === "embedded") {
          const when = db.kind === "embedded" ? " once the service runs again" : "";
          return print(`Sweep ${sweep.id} asked for; the worker sends it${when}.`, sweepResource(sweep));
        }
        const until = Date.now() + 5 * 60_000;
        for (;;) {
          const now = await getSweep(prisma, null, sweep.id);
          if (now.status === "DONE" || now.status === "FAILED") {
            const shown = sweepResource(now);
            if (now.status === "FAILED") throw new CommandError(`Sweep ${sweep.id} failed: ${now.error}`);
            return print(`Swept ${sweep.token} of ${chargeId} on chain ${sweep.chainId} in ${shown.txHash}.`, shown);
          }
          if (Date.now() > until)
            throw new CommandError(`Sweep ${sweep.id} is still ${now.status} after 5 minutes: is a worker running for chain ${sweep.chainId}?`);
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
      case "charges reviewed": {
        const charge = await prisma.charge.findUnique({ where: { id: need("CHARGE_ID") }, select: { merchantId: true, livemode: true } });
        if (!charge) throw new CommandError(`No charge ${target}.`);
        const reviewed = await markChargeReviewed(prisma, charge, target!, { paymentBaseUrl: config.paymentBaseUrl });
        return print(`${reviewed.id} marked reviewed.`, { id: reviewed.id, needsReview: reviewed.reviewReason !== null });
      }
      default:
        throw new UsageError(`Unknown command: ${positionals.join(" ")}`);
    }
  } finally {
    await db.close();
  }
}

/** The chains this service takes payments on, as its configuration (and a running devnet) say. */
function enabledChains(config: ReturnType<typeof loadConfig>): ChainSet {
  return ChainSet.configured(config.chains, config.devnet ? [devnetChain(readDevnetInfo(config.dataDir))] : []);
}

/** One line of `merchant show` per key: never the secret, its last four characters. */
function describeKey(k: { id: string; livemode: boolean; last4: string; ipAllowlist: string[]; expiresAt: Date | null; revokedAt: Date | null }): string {
  const only = k.ipAllowlist.length ? `  only from ${k.ipAllowlist.join(", ")}` : "";
  const state = k.revokedAt ? ` revoked ${k.revokedAt.toISOString()}` : k.expiresAt ? ` rolled, works until ${k.expiresAt.toISOString()}` : "";
  return `    ${k.id}  sk_${modeName(k.livemode)}_…${k.last4}${only}${state}`;
}

/** One line about an endpoint (never its secret). */
function describeEndpoint(e: Omit<WebhookEndpoint, "secret" | "previousSecret">): string {
  const types = e.eventTypes.length ? e.eventTypes.join(",") : "all events";
  const state = e.disabledAt ? `disabled (${e.disabledReason ?? "by the merchant"})` : "enabled";
  return `    ${e.id}  ${modeName(e.livemode)}  ${e.url}  ${types}  ${state}`;
}

/** A password from standard input: its first line (typed, or piped as in `echo … | stablegate users create`). */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Password (10+ characters): ");
  let text = "";
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes("\n")) break;
  }
  process.stdin.pause();
  return text.split(/\r?\n/)[0] ?? "";
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required.`);
  return value;
}

/** `--events a,b` to a list; "" means every event. */
function eventList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

/** CLI flags to merchant fields; an empty string clears an optional setting. */
function merchantInput(v: { [K in keyof typeof options]?: string | boolean }): MerchantInput {
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
  return Object.fromEntries(Object.entries(input).filter(([, x]) => x !== undefined)) as MerchantInput;
}

const FLAG_OF_PARAM: Record<string, string> = {
  url: "--url",
  events: "--events",
  overlapHours: "--overlap-hours",
  name: "--name",
  feeBps: "--fee-bps",
  paymentWindowMinutes: "--payment-window-minutes",
  underpaymentToleranceBps: "--underpayment-tolerance-bps",
  testWallet: "--test-wallet",
  liveWallet: "--live-wallet",
  testWebhookUrl: "--test-webhook-url",
  liveWebhookUrl: "--live-webhook-url",
  ipAllowlist: "--ip-allowlist",
  email: "--email",
  password: "the password on standard input",
  token: "--token",
  chainId: "--chain",
};

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof AppError) {
    // A list item's param (events.0) belongs to the list's flag.
    const flag = e.param ? FLAG_OF_PARAM[e.param.split(/[.[]/)[0]!] : undefined;
    console.error(`Error: ${e.message}${flag ? ` (${flag})` : ""}`);
  } else if (
    e instanceof UsageError ||
    e instanceof CommandError ||
    e instanceof ConfigError ||
    e instanceof DatabaseLockedError ||
    e instanceof DatabaseMarkerError ||
    e instanceof MigrationError
  ) {
    console.error(`Error: ${e.message}`);
    if (e instanceof UsageError) console.error("Run 'stablegate --help' for usage.");
  } else if (e instanceof TypeError && (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    console.error(`Error: ${e.message}\nRun 'stablegate --help' for usage.`);
  } else {
    console.error(e);
  }
  process.exitCode = 1;
});
