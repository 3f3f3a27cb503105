// The only reader of process.env. Every setting, its default and its validation live here.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { getAddress } from "ethers";
import { z } from "zod";
import { type ChainSettings, missingRelayerKeys, parseChainSettings, relayerKeyOf, relayerKeyProblem, rpcUrlProblem, splitUrls } from "./chain/config.js";
import { parseAmount } from "./domain/money.js";
import { isEmailAddress } from "./email/address.js";
import { DEFAULT_RELAYER_GAS_BUDGET } from "./domain/relayer-budget.js";
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from "./domain/subscription-billing.js";

const port = z.coerce.number().int().min(0).max(65535);
const perMinute = z.coerce.number().int().min(1).max(1_000_000);
const url = z.url({ protocol: /^https?$/ });
const flag = z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).transform((v) => v === "true" || v === "1");
const amount = z
  .string()
  .refine((s) => (parseAmount(s) ?? 0n) > 0n, "must be a positive USDC amount such as 0.01")
  .transform((s) => parseAmount(s)!);

const schema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  PORT: port.default(4000),
  WORKER_PORT: port.default(9464),
  HOST: z.string().min(1).default("127.0.0.1"),
  PUBLIC_URL: url.optional(),
  PAYMENT_BASE_URL: url.optional(),
  DATA_DIR: z.string().min(1).default("./.data"),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_PASSWORD: z.string().min(1).optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(100),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  RATE_LIMIT_CREATE: perMinute.default(100),
  RATE_LIMIT_READ: perMinute.default(300),
  RATE_LIMIT_LIST: perMinute.default(60),
  RATE_LIMIT_PUBLIC: perMinute.default(120),
  RATE_LIMIT_AUTH_FAILURES: perMinute.default(30),
  RATE_LIMIT_GASLESS: perMinute.default(10),
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|10|[0-9])$/, { error: "must be true, false, or the number of proxies in front (0-10)" })
    .default("false")
    .transform((v) => (v === "true" ? 1 : v === "false" ? 0 : Number(v))),
  CORS_ORIGINS: z
    .string()
    .regex(/^https?:\/\/[^\s/]+( https?:\/\/[^\s/]+)*$/, "must be origins separated by spaces, such as https://shop.example https://admin.shop.example")
    .optional(),
  SHED_ANONYMOUS_LAG_MS: z.coerce.number().int().min(0).max(10_000).default(10),
  PAGE_TOKEN_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(5_000),
  CHARGE_MIN_AMOUNT: amount.default(parseAmount("0.01")!),
  CHARGE_MAX_AMOUNT: amount.default(parseAmount("1000000")!),
  GASLESS_MIN_AMOUNT: amount.default(parseAmount("1")!),
  PAYOUT_MIN_AMOUNT: amount.optional(),
  RELAYER_GAS_BUDGET_PER_MERCHANT: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .default(Number(DEFAULT_RELAYER_GAS_BUDGET))
    .transform((n) => BigInt(n)),
  RELAYER_PREVIOUS_KEYS: z
    .string()
    .regex(/^\s*0x[0-9a-fA-F]{64}\s*(,\s*0x[0-9a-fA-F]{64}\s*)*$/, "must be 0x-prefixed 32-byte private keys separated by commas")
    .optional()
    .transform((v) => v?.split(",").map((k) => k.trim()) ?? []),
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
  SUBSCRIPTION_RETRY_SCHEDULE: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE)
    .transform((text, ctx) => {
      try {
        return parseRetrySchedule(text);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: (e as Error).message });
        return z.NEVER;
      }
    }),
  RUN_WORKER: flag.default(true),
  AUTO_MIGRATE: flag.default(true),
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  INSTANCE_ID: z
    .string()
    .regex(/^[\w.:-]{1,64}$/, "must be 1-64 letters, digits, dots, colons, dashes or underscores")
    .optional(),
  FEE_RECIPIENT: z.string().optional(),
  DEVNET: z.enum(["auto", "true", "false"], { error: "must be auto, true or false" }).default("auto"),
  EXPIRY_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(1_000),
  CHAIN_POLL_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(1_000),
  RELAYER_BUMP_AFTER_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  PARTIAL_PAYMENT_EXTENSION_MINUTES: z.coerce.number().int().min(0).max(10_080).default(15),
  LIVE_CONNECTIONS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(100),
  LIVE_STREAMS_PER_IP: z.coerce.number().int().min(1).max(100_000).default(10),
  LIVE_SUBSCRIBERS_PER_CHARGE: z.coerce.number().int().min(1).max(100_000).default(50),
  LIVE_SUBSCRIPTIONS_PER_CONNECTION: z.coerce.number().int().min(1).max(1_000).default(20),
  LIVE_QUEUE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(100),
  LIVE_KEEPALIVE_MS: z.coerce.number().int().min(1_000).max(600_000).default(12_000),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: "must be smtp://user:pass@host:port or smtps://user:pass@host:port" }).optional(),
  EMAIL_FROM: z
    .string()
    .refine((v) => isEmailAddress(v), "must be one email address, such as payments@shop.example")
    .optional(),
  ALERT_EMAIL: z
    .string()
    .refine((v) => isEmailAddress(v), "must be one email address, such as ops@shop.example")
    .optional(),
  PAYMENT_FRAME_ANCESTORS: z
    .string()
    .regex(/^https?:\/\/[^\s/]+( https?:\/\/[^\s/]+)*$/, "must be origins separated by spaces, such as https://shop.example https://www.shop.example")
    .optional(),
});

export type Mode = "development" | "production" | "test";

/** Requests per minute: per API key and route group, and per client address for callers without a key. */
export interface RateLimits {
  create: number;
  read: number;
  list: number;
  /** Public routes, the hosted page and anonymous GraphQL, per client address. */
  public: number;
  /** Failed authentications per client address, after which its requests get 429. */
  authFailures: number;
  /** Payments without gas handed in per client address (each costs RPC calls, and gas once sent). */
  gasless: number;
}

/** Validated service configuration. */
export interface Config {
  env: Mode;
  port: number;
  host: string;
  publicUrl: string;
  /** Whether PUBLIC_URL or PORT was set: the CLI then talks to that address, not to the one `npm start` recorded. */
  publicUrlSet: boolean;
  paymentBaseUrl: string;
  /** Directory of the embedded database; unused when `databaseUrl` is set. */
  dataDir: string;
  /** PostgreSQL URL (DATABASE_PASSWORD, when set, is its password); the embedded database when unset. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** Whether a process applies pending migrations as it starts; off, it refuses to start on a database behind its release. */
  autoMigrate: boolean;
  /** After SIGTERM, how long /readyz fails before the server stops taking requests (a load balancer's time to notice). */
  shutdownDelayMs: number;
  /** Names this process on every log line and on its database connections. */
  instanceId: string;
  redisUrl: string | undefined;
  feeBps: number;
  logLevel: string;
  rateLimits: RateLimits;
  /** How many proxies in front append to X-Forwarded-For (0: the header is not believed). */
  trustProxy: number;
  /** Origins whose browsers may call the keyed REST routes and /graphql; none when empty. */
  corsOrigins: string[];
  authCacheTtlMs: number;
  /** Bounds of a charge's amount, in USDC base units. */
  chargeAmount: { min: bigint; max: bigint };
  /** Below this amount due (base units), the hosted page offers only a normal transfer, not payment without gas. */
  gaslessMinAmount: bigint;
  /**
   * PAYOUT_MIN_AMOUNT (base units), when set: every chain's payout minimum where CHAIN_<id>_PAYOUT_MIN_AMOUNT sets
   * none (unset: the registry's, per chain), and the dust limit (unset: 0.01 USDC).
   */
  payoutMinAmount: bigint | undefined;
  /** Gas the relayer may spend per merchant, chain and UTC day on its sweeps and its buyers' payments without gas. */
  relayerGasBudgetPerMerchant: bigint;
  /** RELAYER_PREVIOUS_KEYS: keys the relayer used before; their subscription permissions are delegated to the current key. */
  relayerPreviousKeys: string[];
  /** How often the worker compares the ledger with each chain. */
  reconcileIntervalMs: number;
  /** SUBSCRIPTION_RETRY_SCHEDULE: after each failed subscription pull, how long until it is tried again (ms). */
  subscriptionRetrySchedule: number[];
  /** Whether `npm start` also runs the background jobs (turn off when dedicated workers run). */
  runWorker: boolean;
  /** Chains configured by the operator (CHAIN_<id>_* variables). */
  chains: ChainSettings[];
  /** Receives the protocol fee on every configured chain. */
  feeRecipient: string | undefined;
  /** Whether to run the local anvil devnet (chain 31337) for test mode. */
  devnet: boolean;
  /** How often the worker looks for PENDING charges past their expiry. */
  expirySweepIntervalMs: number;
  /** How often each chain's runner polls the node for new blocks and moves payments along. */
  chainPollIntervalMs: number;
  /** How long a deployment or flush transaction may stay unmined before it is replaced with higher fees. */
  relayerBumpAfterMs: number;
  /** How far a partial payment pushes a charge's expiry back, in minutes. */
  partialExtensionMinutes: number;
  /** Origins allowed to embed the hosted payment page in a frame; none when empty. */
  paymentFrameAncestors: string[];
  /** Event-loop lag (ms) past which requests without an API key are refused (429) until it falls; 0: never. */
  shedAnonymousLagMs: number;
  /**
   * Signs the hosted pages' tokens, which let a page's own requests past the anonymous shedding; the
   * same on every API process. Unset: a random one per process.
   */
  pageTokenSecret: string | undefined;
  /**
   * Email (.docs/email.md): the SMTP server emails are sent through (none: kept in the outbox as
   * `held`, never sent), the sender's address, and where the operator's alerts go.
   */
  email: { smtpUrl: string | undefined; from: string; alertTo: string | undefined };
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** Where `npm run worker` answers /healthz, /readyz and /metrics (0: a free port). */
  workerPort: number;
  /** GraphQL subscriptions (WebSocket and SSE). */
  live: {
    /** Open WebSockets plus SSE subscriptions per API key and API process. */
    connectionsPerKey: number;
    /** The same, for callers without a key, per client address and API process. */
    streamsPerIp: number;
    /** Anonymous subscribers (the hosted page's) one charge may have per API process. */
    subscribersPerCharge: number;
    subscriptionsPerConnection: number;
    /** Updates a subscription may leave unread before it is ended (a slow consumer). */
    maxQueued: number;
    /** Ping interval on WebSockets; a client silent for as long again is dropped. */
    keepAliveMs: number;
  };
}

/** Thrown when the environment holds an invalid setting; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The names of every setting (besides the per-chain CHAIN_<id>_* ones): what .env.example must list. */
export function configVariables(): string[] {
  return [...Object.keys(schema.shape), "RELAYER_PRIVATE_KEY"];
}

/** Reads and validates settings from `env` (process.env plus `.env` by default). */
export function loadConfig(env: Record<string, string | undefined> = readProcessEnv()): Config {
  const { env: cleaned, problems: fileProblems } = readSecretFiles(Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => !!e[1])));
  const parsed = schema.safeParse(cleaned);
  // A problem names the variable and what is wrong, never the value: it may be a secret.
  if (!parsed.success) throw invalidConfig(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  const e = parsed.data;
  const { chains, problems } = parseChainSettings(cleaned, { payoutMinAmount: e.PAYOUT_MIN_AMOUNT });
  problems.unshift(...fileProblems);
  if (e.DATABASE_PASSWORD && !e.DATABASE_URL) problems.push("DATABASE_PASSWORD: set DATABASE_URL too (the password goes into it)");
  if (e.CHARGE_MIN_AMOUNT > e.CHARGE_MAX_AMOUNT) problems.push("CHARGE_MIN_AMOUNT: must not exceed CHARGE_MAX_AMOUNT");
  const feeRecipient = checksummed(e.FEE_RECIPIENT) ?? undefined;
  if (e.FEE_RECIPIENT && !feeRecipient) {
    problems.push("FEE_RECIPIENT: not a valid (checksummed) EVM address");
  } else if (!e.FEE_RECIPIENT && Object.keys(cleaned).some((k) => /^CHAIN_\d+_/.test(k))) {
    problems.push("FEE_RECIPIENT: required once a chain is configured (the address that receives the protocol fee)");
  }
  if (problems.length > 0) throw invalidConfig(problems);
  const publicUrl = stripSlash(e.PUBLIC_URL ?? `http://localhost:${e.PORT}`);
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    publicUrlSet: cleaned.PUBLIC_URL !== undefined || cleaned.PORT !== undefined,
    paymentBaseUrl: stripSlash(e.PAYMENT_BASE_URL ?? `${publicUrl}/pay`),
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL && withPassword(e.DATABASE_URL, e.DATABASE_PASSWORD),
    databasePoolSize: e.DATABASE_POOL_SIZE,
    autoMigrate: e.AUTO_MIGRATE,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS ?? (e.NODE_ENV === "production" ? 5_000 : 0),
    instanceId: e.INSTANCE_ID ?? `${hostname()}-${process.pid}`,
    redisUrl: e.REDIS_URL,
    feeBps: e.FEE_BPS,
    logLevel: e.LOG_LEVEL,
    rateLimits: {
      create: e.RATE_LIMIT_CREATE,
      read: e.RATE_LIMIT_READ,
      list: e.RATE_LIMIT_LIST,
      public: e.RATE_LIMIT_PUBLIC,
      authFailures: e.RATE_LIMIT_AUTH_FAILURES,
      gasless: e.RATE_LIMIT_GASLESS,
    },
    trustProxy: e.TRUST_PROXY,
    corsOrigins: e.CORS_ORIGINS?.split(" ") ?? [],
    authCacheTtlMs: e.AUTH_CACHE_TTL_MS,
    chargeAmount: { min: e.CHARGE_MIN_AMOUNT, max: e.CHARGE_MAX_AMOUNT },
    gaslessMinAmount: e.GASLESS_MIN_AMOUNT,
    payoutMinAmount: e.PAYOUT_MIN_AMOUNT,
    relayerGasBudgetPerMerchant: e.RELAYER_GAS_BUDGET_PER_MERCHANT,
    relayerPreviousKeys: e.RELAYER_PREVIOUS_KEYS,
    subscriptionRetrySchedule: e.SUBSCRIPTION_RETRY_SCHEDULE,
    reconcileIntervalMs: e.RECONCILE_INTERVAL_MS,
    runWorker: e.RUN_WORKER,
    chains,
    feeRecipient,
    // By default the devnet runs for local development only: not in production, not in tests,
    // and not once real chains are configured.
    devnet: e.DEVNET === "true" || (e.DEVNET === "auto" && e.NODE_ENV === "development" && chains.length === 0),
    expirySweepIntervalMs: e.EXPIRY_SWEEP_INTERVAL_MS,
    chainPollIntervalMs: e.CHAIN_POLL_INTERVAL_MS,
    relayerBumpAfterMs: e.RELAYER_BUMP_AFTER_MS,
    partialExtensionMinutes: e.PARTIAL_PAYMENT_EXTENSION_MINUTES,
    paymentFrameAncestors: e.PAYMENT_FRAME_ANCESTORS?.split(" ") ?? [],
    metricsToken: e.METRICS_TOKEN,
    email: { smtpUrl: e.SMTP_URL, from: e.EMAIL_FROM ?? `no-reply@${new URL(publicUrl).hostname}`, alertTo: e.ALERT_EMAIL },
    workerPort: e.WORKER_PORT,
    shedAnonymousLagMs: e.SHED_ANONYMOUS_LAG_MS,
    pageTokenSecret: e.PAGE_TOKEN_SECRET,
    live: {
      connectionsPerKey: e.LIVE_CONNECTIONS_PER_KEY,
      streamsPerIp: e.LIVE_STREAMS_PER_IP,
      subscribersPerCharge: e.LIVE_SUBSCRIBERS_PER_CHARGE,
      subscriptionsPerConnection: e.LIVE_SUBSCRIPTIONS_PER_CONNECTION,
      maxQueued: e.LIVE_QUEUE_LIMIT,
      keepAliveMs: e.LIVE_KEEPALIVE_MS,
    },
  };
}

/** The names of the settings that may come from a file (NAME_FILE): the secrets. */
export const SECRET_SETTINGS = [
  "RELAYER_PRIVATE_KEY",
  "RELAYER_PREVIOUS_KEYS",
  "CHAIN_<id>_RELAYER_KEY",
  "CHAIN_<id>_RPC_URL",
  "DATABASE_URL",
  "DATABASE_PASSWORD",
  "REDIS_URL",
  "METRICS_TOKEN",
  "PAGE_TOKEN_SECRET",
  "SMTP_URL",
];

/** NAME_FILE for each secret NAME: the variable holding the path of its value (a mounted secret). */
const SECRET_FILE = new RegExp(`^(${SECRET_SETTINGS.map((n) => n.replace("<id>", "\\d+")).join("|")})_FILE$`);

/**
 * Throws unless every configured chain has a relayer key: only processes that send transactions
 * (the worker, `npm start` with RUN_WORKER) hold one; the API and `migrate` start without it.
 */
export function requireRelayerKeys(config: Pick<Config, "chains">): void {
  const problems = missingRelayerKeys(config.chains);
  if (problems.length > 0) throw invalidConfig(problems);
}

/** `url` with `password` as its password (percent-encoded), or unchanged without one. */
function withPassword(url: string, password: string | undefined): string {
  if (!password) return url;
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** `env` with each secret *_FILE variable replaced by its file's contents (trimmed); problems name the variable and path, never a value. */
function readSecretFiles(env: Record<string, string>): { env: Record<string, string>; problems: string[] } {
  const out = { ...env };
  const problems: string[] = [];
  for (const [name, path] of Object.entries(env)) {
    const m = SECRET_FILE.exec(name);
    if (!m) continue;
    const target = m[1]!;
    delete out[name];
    if (env[target]) {
      problems.push(`${name}: set either ${target} or ${name}, not both`);
      continue;
    }
    try {
      out[target] = readFileSync(path, "utf8").trim();
    } catch (err) {
      problems.push(`${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
  }
  return { env: out, problems };
}

function readProcessEnv(): Record<string, string | undefined> {
  // The cwd's .env file fills in what the real environment leaves unset (loadEnvFile never overrides
  // a variable already set); without one, the environment alone counts.
  try {
    process.loadEnvFile(".env");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  return process.env;
}

function stripSlash(s: string): string {
  return s.replace(/\/+$/, "");
}

/** What `npm run contracts:deploy -- --chain <id>` needs: the chain's RPC URLs, a funded key, the fee recipient. */
export function loadDeploySettings(
  chainId: number,
  rawEnv: Record<string, string | undefined> = readProcessEnv(),
): { rpcUrls: string[]; relayerKey: string; feeRecipient: string } {
  const { env, problems } = readSecretFiles(Object.fromEntries(Object.entries(rawEnv).filter((e): e is [string, string] => !!e[1])));
  const rpcUrls = splitUrls(env[`CHAIN_${chainId}_RPC_URL`] ?? "");
  const relayerKey = relayerKeyOf(env, chainId);
  const feeRecipient = checksummed(env.FEE_RECIPIENT);
  problems.push(...[rpcUrlProblem(chainId, rpcUrls), relayerKeyProblem(chainId, relayerKey)].filter((p) => p !== null));
  if (!feeRecipient) problems.push("FEE_RECIPIENT: required, the (checksummed) address that receives the protocol fee; it is fixed in the contracts");
  if (problems.length > 0) throw invalidConfig(problems);
  return { rpcUrls, relayerKey, feeRecipient: feeRecipient! };
}

function invalidConfig(problems: string[]): ConfigError {
  return new ConfigError(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
}

/** The checksummed form of an EVM address, or null when it is missing or invalid. */
function checksummed(address: string | undefined): string | null {
  try {
    return address ? getAddress(address) : null;
  } catch {
    return null;
  }
}
