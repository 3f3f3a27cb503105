// Test harness: a real service on port 0 over a fresh database (in-memory PGlite, or a throwaway
// PostgreSQL database when DATABASE_URL is set), with a merchant and keys, and a query counter.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { expect } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { parseEther } from "ethers";
import { ChainSet, type EnabledChain, enableChain } from "../../src/chain/chains.js";
import { factoryV2Address } from "../../src/chain/clones.js";
import { type Config, loadConfig } from "../../src/config.js";
import { type Database, openDatabase } from "../../src/db/client.js";
import { MIGRATIONS_DIR, migrate } from "../../src/db/migrate.js";
import { randomBase62 } from "../../src/domain/ids.js";
import { createMerchant, type MerchantCreated } from "../../src/domain/merchants.js";
import type { LiveCharges } from "../../src/realtime/charges.js";
import { buildServices, type Services, type ServicesOptions } from "../../src/services.js";
import { type Contract, contractOf } from "./contract.js";
import { migratedTemplate } from "./database-template.js";

export const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/**
 * Base as the one live chain of a test service (nothing calls its RPC URL): live charges, invoices and
 * payment links need an enabled live chain (domain/live-chains.ts). Pass `{ chains: liveChains() }` to startApp;
 * `others` (a test chain) join it, Base then taking their fee recipient (one fee recipient makes one factory).
 */
export function liveChains(others: EnabledChain[] = []): ChainSet {
  const feeRecipient = others[0]?.feeRecipient ?? "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
  return new ChainSet([
    ...others,
    enableChain({
      chainId: 8453,
      rpcUrls: ["http://127.0.0.1:9"],
      factory: factoryV2Address(feeRecipient),
      feeRecipient,
      maxFeePerGas: parseEther("0.0000001"),
      stuckAfterSeconds: 900,
      watchTokens: [],
      confirmations: 20,
      relayerKey: "",
      relayerMinBalance: parseEther("0.005"),
    }),
  ]);
}

/** The charge and payment settings of a service started with test defaults. */
export const SETTINGS = {
  amount: { min: 10_000n, max: 1_000_000_000_000n },
  paymentBaseUrl: "http://localhost:4000/pay",
  partialExtensionMinutes: 15,
  payoutMinAmount: 10_000n,
};

/** Settings for tests that poll the API every few milliseconds: a read budget they cannot run out of. */
export const POLLING = { RATE_LIMIT_READ: "1000000" };

/**
 * A fresh database and the way to throw it away: migrated with the migrations in `migrations` (the
 * project's by default; false: none, an empty database).
 */
export async function freshDatabase(
  onQuery?: (sql: string) => void,
  migrations: string | false = MIGRATIONS_DIR,
): Promise<{ db: Database; url?: string; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) {
    // The project's migrations come from the shared template; `migrate` still checks they all are there.
    const loadDataDir = migrations === MIGRATIONS_DIR ? await migratedTemplate() : undefined;
    const db = await openDatabase({ dataDir: null, onQuery, ...(loadDataDir && { loadDataDir }) });
    if (migrations) await migrate(db, migrations);
    return { db, drop: () => db.close() };
  }
  const name = `sg_test_${randomBase62(12).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), onQuery, poolSize: 20 });
  if (migrations) await migrate(db, migrations);
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export interface Call {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestApp {
  url: string;
  db: Database;
  /** The PostgreSQL database's URL (for a CLI run against it); undefined on the in-memory embedded one. */
  databaseUrl?: string;
  merchant: MerchantCreated;
  testKey: string;
  liveKey: string;
  /** SQL statements Prisma sent since the last reset. */
  queries: string[];
  /** The service's live feed (for jobs run by the test that should announce their changes). */
  live: LiveCharges;
  /** The service's pub/sub: how many subscriptions it has open, and whether they are confirmed. */
  pubsub: Services["pubsub"];
  /** The domain's settings as the service built them (the enabled chains among them): what its worker would run the jobs with. */
  settings: Services["settings"];
  /** The anonymous bulkhead: a test may hold its places to stand for a flood being shed. */
  anonymous: Services["anonymous"];
  call(method: string, path: string, opts?: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<Call>;
  gql(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<{ data: any; errors?: any[] }>;
  newMerchant(): Promise<MerchantCreated>;
  stop(): Promise<void>;
}

/**
 * Every test calls from 127.0.0.1 (and, on Redis, shares its counters with the other test files):
 * per-address limits are off unless a test turns them on (through X-Forwarded-For with TRUST_PROXY,
 * where `call` speaks from an address of the app's own unless the test names one).
 */
export const UNLIMITED_ADDRESS = {
  // One secret for every instance of a test, as a deployment's API processes share one.
  PAGE_TOKEN_SECRET: "test-page-token-secret-shared-by-every-instance",
  RATE_LIMIT_PUBLIC: "1000000",
  RATE_LIMIT_AUTH_FAILURES: "1000000",
  RATE_LIMIT_GASLESS: "1000000",
  LIVE_STREAMS_PER_IP: "100000",
  SHED_ANONYMOUS_LAG_MS: "0",
};

/**
 * Starts the service with test settings; `env` overrides configuration variables. Every /v1 call
 * made through `call` is checked against the service's OpenAPI document (helpers/contract.ts).
 * `alsoMigrate`: a folder of further migrations applied before the service starts (prisma/contract-next:
 * the next release's schema, which this release must serve on too).
 */
export async function startApp(
  env: Record<string, string> = {},
  { alsoMigrate, ...options }: Pick<ServicesOptions, "chains" | "devnet" | "logger"> & { alsoMigrate?: string } = {},
): Promise<TestApp> {
  const queries: string[] = [];
  const { db, drop, url: databaseUrl } = await freshDatabase((sql) => queries.push(sql));
  if (alsoMigrate) await migrate(db, alsoMigrate);
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS, ...env });
  const app = await buildTestApp(config, { db, ...options });
  const url = await app.start(0);
  const newMerchant = () => createMerchant(db.prisma, { name: "Test Shop", testWallet: WALLET, liveWallet: WALLET }, { feeBps: 100 });
  const merchant = await newMerchant();
  const testKey = merchant.apiKeys.test.secret;
  // Behind a trusted proxy the app's own calls (the contract's document included) never spend
  // 127.0.0.1's counters, which other test files share through Redis.
  const own: Record<string, string> = config.trustProxy
    ? { "x-forwarded-for": `2001:db8:ffff::${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}` }
    : {};

  const call: TestApp["call"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...own, ...opts.headers };
    const key = opts.key === undefined ? testKey : opts.key;
    if (key !== null) headers["x-api-key"] = key;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {}
    if (path.startsWith("/v1/") && !path.startsWith("/v1/openapi.json")) {
      contract ??= fetch(`${url}/v1/openapi.json`, { headers: own }).then(async (r) => contractOf(await r.text()));
      let sent: unknown;
      try {
        sent = body === undefined ? undefined : JSON.parse(body);
      } catch {}
      const problem = (await contract).problem(method, path, sent, res.status, parsed, res.headers.get("content-type") ?? undefined);
      if (problem) throw new Error(`contract (GET /v1/openapi.json): ${problem}\n${text.slice(0, 500)}`);
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  let contract: Promise<Contract> | undefined;

  return {
    url,
    db,
    databaseUrl,
    merchant,
    testKey,
    liveKey: merchant.apiKeys.live.secret,
    queries,
    live: app.services.live,
    pubsub: app.services.pubsub,
    settings: app.services.settings,
    anonymous: app.services.anonymous,
    call,
    async gql(query, variables, key) {
      const res = await call("POST", "/graphql", { key, body: { query, variables } });
      return res.body;
    },
    newMerchant,
    async stop() {
      await app.stop();
      await drop();
    },
  };
}

/** The API with the services it runs on. */
export type TestService = App & { services: Services };

/** The API on its own services (an API process's worth); stopping it stops both. */
export async function buildTestApp(config: Config, options: ServicesOptions): Promise<TestService> {
  const services = await buildServices(config, options);
  const app = buildApp(services);
  return {
    ...app,
    services,
    async stop() {
      await app.stop();
      await services.close();
    },
  };
}

/** Rows in the customers table, across all merchants: "nothing changed" checks compare it. */
export async function customerCount(app: TestApp): Promise<number> {
  return app.db.prisma.customer.count();
}

/** Asserts an API error response: status, the flat error body, its code and (optionally) param. */
export function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string, param?: string | null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(["code", "docUrl", "error", "message", "param", "requestId", "statusCode"]);
  expect(res.body.docUrl).toMatch(new RegExp(`/docs#error-${code}$`));
  expect(res.body).toMatchObject({ statusCode: status, code });
  if (param !== undefined) expect(res.body.param).toBe(param);
  expect(res.body.requestId).toBe(res.headers.get("x-request-id"));
  expect(res.body.message.length).toBeGreaterThan(5);
}

/** A second API process's worth of service on `app`'s database (its own HTTP server, pub/sub and connections), as behind a load balancer. */
export async function startSecondInstance(
  app: TestApp,
  env: Record<string, string> = {},
): Promise<{ url: string; pubsub: Services["pubsub"]; stop(): Promise<void> }> {
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS, ...env });
  const second = await buildTestApp(config, { db: app.db });
  return { url: await second.start(0), pubsub: second.services.pubsub, stop: () => second.stop() };
}

/** A USDC payment into a charge's address as the indexer records it: SEEN (waiting for confirmations) unless said. */
export function recordPayment(
  prisma: Database["prisma"],
  p: {
    chargeId: string;
    amount: string;
    id?: string;
    chainId?: number;
    txHash?: string;
    logIndex?: number;
    blockNumber?: bigint;
    fromAddress?: string;
    toAddress?: string;
    status?: "SEEN" | "CONFIRMED";
  },
) {
  const txHash = p.txHash ?? `0x${"12".repeat(32)}`;
  const from = p.fromAddress ?? "0x3333333333333333333333333333333333333333";
  const to = p.toAddress ?? "0x2222222222222222222222222222222222222222";
  return prisma.chainTransfer.create({
    data: {
      id: p.id ?? `xfer_${randomBytes(12).toString("hex")}`,
      chargeId: p.chargeId,
      chainId: p.chainId ?? 31337,
      txHash,
      logIndex: p.logIndex ?? 0,
      blockNumber: p.blockNumber ?? 1n,
      blockHash: `0x${"34".repeat(32)}`,
      fromAddress: from,
      toAddress: to,
      amount: p.amount,
      factKey: `${txHash}:${from.toLowerCase()}:${to.toLowerCase()}:${p.amount}:${p.logIndex ?? 0}`,
      kind: "PAYMENT",
      status: p.status ?? "SEEN",
    },
  });
}
