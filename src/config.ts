// The only reader of process.env (test/architecture.test.ts checks that no other file reads it).
// Every setting is written once, in `settings`: the variable it is read from, its parsing and
// validation, its default and its doc comment; `Config` is derived from it.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { getAddress } from "ethers";
import { z } from "zod";
import { type ChainSettings, missingRelayerKeys, parseChainSettings, relayerKeyOf, relayerKeyProblem, rpcUrlProblem, splitUrls } from "./chain/config.js";
import { parseAmount } from "./domain/money.js";
import { isEmailAddress } from "./email/address.js";
import { DEFAULT_RELAYER_GAS_BUDGET } from "./domain/relayer-budget.js";
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from "./domain/subscription-billing.js";

/** The environment variable each setting's schema reads (see `read`). */
const variables = z.registry<{ variable: string }>();

/** `schema`, read from the environment variable `variable`. */
function read<T extends z.ZodType>(variable: string, schema: T): T {
  // One schema per variable: a shared one would be named twice.
  if (variables.has(schema)) throw new Error(`${variable}: its schema is already ${variables.get(schema)!.variable}'s`);
  variables.add(schema as z.ZodType, { variable });
  return schema;
}

const port = z.coerce.number().int().min(0).max(65535);
const perMinute = z.coerce.number().int().min(1).max(1_000_000);
const url = z.url({ protocol: /^https?$/ });
const flag = z.enum(["true", "false", "1", "0"], { error: "must be true or false" }).transform((v) => v === "true" || v === "1");
const amount = z
  .string()
  .refine((s) => (parseAmount(s) ?? 0n) > 0n, "must be a positive USDC amount such as 0.01")
  .transform((s) => parseAmount(s)!);
const origins = (example: string) =>
  z
    .string()
    .regex(/^https?:\/\/[^\s/]+( https?:\/\/[^\s/]+)*$/, `must be origins separated by spaces, such as ${example}`)
    .optional()
    .transform((v) => v?.split(" ") ?? []);
const email = (example: string) =>
  z
    .string()
    .refine((v) => isEmailAddress(v), `must be one email address, such as ${example}`)
    .optional();

/** Every setting besides the per-chain CHAIN_<id>_* ones, by its name in `Config`. */
const settings = z.object({
  env: read("NODE_ENV", z.enum(["development", "production", "test"]).default("development")),
  port: read("PORT", port.default(4000)),
  host: read("HOST", z.string().min(1).default("127.0.0.1")),
  /** Base URL of the API as buyers' browsers reach it (no trailing slash); default http://localhost:PORT. */
  publicUrl: read("PUBLIC_URL", url.optional()),
  /** Base URL of the hosted payment pages; default PUBLIC_URL/pay. */
  paymentBaseUrl: read("PAYMENT_BASE_URL", url.optional()),
  /** Directory of the embedded database; unused when `databaseUrl` is set. */
  dataDir: read("DATA_DIR", z.string().min(1).default("./.data")),
  /** PostgreSQL URL (DATABASE_PASSWORD, when set, is its password); the embedded database when unset. */
  databaseUrl: read("DATABASE_URL", z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  /** Goes into `databaseUrl` as its password; not kept apart. */
  databasePassword: read("DATABASE_PASSWORD", z.string().min(1).optional()),
  databasePoolSize: read("DATABASE_POOL_SIZE", z.coerce.number().int().min(1).max(500).default(10)),
  /** Whether a process applies pending migrations as it starts; off, it refuses to start on a database behind its release. */
  autoMigrate: read("AUTO_MIGRATE", flag.default(true)),
  /** After SIGTERM, how long /readyz fails before the server stops taking requests (a load balancer's time to notice); default 5 s in production, else 0. */
  shutdownDelayMs: read("SHUTDOWN_DELAY_MS", z.coerce.number().int().min(0).max(60_000).optional()),
  /** Names this process on every log line and on its database connections; default <host name>-<pid>. */
  instanceId: read(
    "INSTANCE_ID",
    z
      .string()
      .regex(/^[\w.:-]{1,64}$/, "must be 1-64 letters, digits, dots, colons, dashes or underscores")
      .optional(),
  ),
  redisUrl: read("REDIS_URL", z.url({ protocol: /^rediss?$/ }).optional()),
  /** The fee of new merchants, in basis points. */
  feeBps: read("FEE_BPS", z.coerce.number().int().min(0).max(10_000).default(100)),
  logLevel: read("LOG_LEVEL", z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info")),
  /** Requests per minute: per API key and route group, and per client address for callers without a key. */
  rateLimits: z.object({
    create: read("RATE_LIMIT_CREATE", perMinute.default(100)),
    read: read("RATE_LIMIT_READ", perMinute.default(300)),
    list: read("RATE_LIMIT_LIST", perMinute.default(60)),
    /** Public routes, the hosted page and anonymous GraphQL, per client address. */
    public: read("RATE_LIMIT_PUBLIC", perMinute.default(120)),
    /** Failed authentications per client address, after which its requests get 429. */
    authFailures: read("RATE_LIMIT_AUTH_FAILURES", perMinute.default(30)),
    /** Payments without gas handed in per client address (each costs RPC calls, and gas once sent). */
    gasless: read("RATE_LIMIT_GASLESS", perMinute.default(10)),
    /** The x402 facilitator's verify and settle calls per API key (each costs RPC calls, and settle gas). */
    x402: read("RATE_LIMIT_X402", perMinute.default(600)),
  }),
  /** How many proxies in front append to X-Forwarded-For (0: the header is not believed). */
  trustProxy: read(
    "TRUST_PROXY",
    z
      .string()
      .regex(/^(true|false|10|[0-9])$/, { error: "must be true, false, or the number of proxies in front (0-10)" })
      .default("false")
      .transform((v) => (v === "true" ? 1 : v === "false" ? 0 : Number(v))),
  ),
  /** Origins whose browsers may call the keyed REST routes and /graphql; none when empty. */
  corsOrigins: read("CORS_ORIGINS", origins("https://shop.example https://admin.shop.example")),
  /** Event-loop lag (ms) past which requests without an API key are refused (429) until it falls; 0: never. */
  shedAnonymousLagMs: read("SHED_ANONYMOUS_LAG_MS", z.coerce.number().int().min(0).max(10_000).default(10)),
  /**
   * Signs the hosted pages' tokens, which let a page's own requests past the anonymous shedding; the
   * same on every API process. Unset: a random one per process.
   */
  pageTokenSecret: read("PAGE_TOKEN_SECRET", z.string().min(32, "must be at least 32 characters").optional()),
  authCacheTtlMs: read("AUTH_CACHE_TTL_MS", z.coerce.number().int().min(0).max(300_000).default(5_000)),
  /** Bounds of a charge's amount, in USDC base units. */
  chargeAmount: z.object({
    min: read("CHARGE_MIN_AMOUNT", amount.default(parseAmount("0.01")!)),
    max: read("CHARGE_MAX_AMOUNT", amount.default(parseAmount("1000000")!)),
  }),
  /** Below this amount due (base units), the hosted page offers only a normal transfer, not payment without gas. */
  gaslessMinAmount: read("GASLESS_MIN_AMOUNT", amount.default(parseAmount("1")!)),
  /** The least an x402 payment settles for (base units); unset: each chain's payout minimum. */
  x402MinAmount: read("X402_MIN_AMOUNT", amount.optional()),
  /** How long the facilitator's settle waits for its transaction to be in a block before it answers `settlement_pending`. */
  x402SettleTimeoutMs: read("X402_SETTLE_TIMEOUT_MS", z.coerce.number().int().min(1_000).max(80_000).default(30_000)),
  /**
   * PAYOUT_MIN_AMOUNT (base units), when set: every chain's payout minimum where CHAIN_<id>_PAYOUT_MIN_AMOUNT sets
   * none (unset: the registry's, per chain), and the dust limit (unset: 0.01 USDC).
   */
  payoutMinAmount: read("PAYOUT_MIN_AMOUNT", amount.optional()),
  /** Gas the relayer may spend per merchant, chain and UTC day on its sweeps and its buyers' payments without gas. */
  relayerGasBudgetPerMerchant: read(
    "RELAYER_GAS_BUDGET_PER_MERCHANT",
    z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .default(Number(DEFAULT_RELAYER_GAS_BUDGET))
      .transform((n) => BigInt(n)),
  ),
  /** Keys the relayer used before; their subscription permissions are delegated to the current key. */
  relayerPreviousKeys: read(
    "RELAYER_PREVIOUS_KEYS",
    z
      .string()
      .regex(/^\s*0x[0-9a-fA-F]{64}\s*(,\s*0x[0-9a-fA-F]{64}\s*)*$/, "must be 0x-prefixed 32-byte private keys separated by commas")
      .optional()
      .transform((v) => v?.split(",").map((k) => k.trim()) ?? []),
  ),
  /** How often the worker compares the ledger with each chain. */
  reconcileIntervalMs: read("RECONCILE_INTERVAL_MS", z.coerce.number().int().min(1_000).max(86_400_000).default(600_000)),
  /** After each failed subscription pull, how long until it is tried again (ms). */
  subscriptionRetrySchedule: read(
    "SUBSCRIPTION_RETRY_SCHEDULE",
    z
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
  ),
  /** Whether `npm start` also runs the background jobs (turn off when dedicated workers run). */
  runWorker: read("RUN_WORKER", flag.default(true)),
  /** Receives the protocol fee on every configured chain (checksummed). */
  feeRecipient: read(
    "FEE_RECIPIENT",
    z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const address = checksummed(v);
        if (address === null) ctx.addIssue({ code: "custom", message: "not a valid (checksummed) EVM address" });
        return address ?? z.NEVER;
      }),
  ),
  /** Whether to run the local anvil devnet (chain 31337) for test mode; `auto`: in development when no chain is configured. */
  devnet: read("DEVNET", z.enum(["auto", "true", "false"], { error: "must be auto, true or false" }).default("auto")),
  /** How often the worker looks for PENDING charges past their expiry. */
  expirySweepIntervalMs: read("EXPIRY_SWEEP_INTERVAL_MS", z.coerce.number().int().min(100).max(3_600_000).default(1_000)),
  /** How often each chain's runner polls the node for new blocks and moves payments along. */
  chainPollIntervalMs: read("CHAIN_POLL_INTERVAL_MS", z.coerce.number().int().min(50).max(600_000).default(1_000)),
  /** How long a deployment or flush transaction may stay unmined before it is replaced with higher fees. */
  relayerBumpAfterMs: read("RELAYER_BUMP_AFTER_MS", z.coerce.number().int().min(1_000).max(3_600_000).default(60_000)),
  /** How far a partial payment pushes a charge's expiry back, in minutes. */
  partialExtensionMinutes: read("PARTIAL_PAYMENT_EXTENSION_MINUTES", z.coerce.number().int().min(0).max(10_080).default(15)),
  /** Origins allowed to embed the hosted payment page in a frame; none when empty. */
  paymentFrameAncestors: read("PAYMENT_FRAME_ANCESTORS", origins("https://shop.example https://www.shop.example")),
  /** Email (.docs/email.md). */
  email: z.object({
    /** The SMTP server emails are sent through; none: kept in the outbox as `held`, never sent. */
    smtpUrl: read("SMTP_URL", z.url({ protocol: /^smtps?$/, error: "must be smtp://user:pass@host:port or smtps://user:pass@host:port" }).optional()),
    /** The sender's address; default no-reply@<PUBLIC_URL's host name>. */
    from: read("EMAIL_FROM", email("payments@shop.example")),
    /** Where the operator's alerts go. */
    alertTo: read("ALERT_EMAIL", email("ops@shop.example")),
  }),
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: read("METRICS_TOKEN", z.string().min(16, "must be at least 16 characters").optional()),
  /** Where `npm run worker` answers /healthz, /readyz and /metrics (0: a free port). */
  workerPort: read("WORKER_PORT", port.default(9464)),
  /** GraphQL subscriptions (WebSocket and SSE). */
  live: z.object({
    /** Open WebSockets plus SSE subscriptions per API key and API process. */
    connectionsPerKey: read("LIVE_CONNECTIONS_PER_KEY", z.coerce.number().int().min(1).max(100_000).default(100)),
    /** The same, for callers without a key, per client address and API process. */
    streamsPerIp: read("LIVE_STREAMS_PER_IP", z.coerce.number().int().min(1).max(100_000).default(10)),
    /** Anonymous subscribers (the hosted page's) one charge may have per API process. */
    subscribersPerCharge: read("LIVE_SUBSCRIBERS_PER_CHARGE", z.coerce.number().int().min(1).max(100_000).default(50)),
    subscriptionsPerConnection: read("LIVE_SUBSCRIPTIONS_PER_CONNECTION", z.coerce.number().int().min(1).max(1_000).default(20)),
    /** Updates a subscription may leave unread before it is ended (a slow consumer). */
    maxQueued: read("LIVE_QUEUE_LIMIT", z.coerce.number().int().min(1).max(100_000).default(100)),
    /** Ping interval on WebSockets; a client silent for as long again is dropped. */
    keepAliveMs: read("LIVE_KEEPALIVE_MS", z.coerce.number().int().min(1_000).max(600_000).default(12_000)),
  }),
  /** The git commit of the build, shown in /metrics (stablegate_build_info). */
  gitCommit: read("GIT_COMMIT", z.string().default("unknown")),
  /** The test key the CLI's `listen` and `devnet` commands use when --api-key/--key is not given. */
  apiKey: read("STABLEGATE_API_KEY", z.string().optional()),
});

/** The settings resolved against each other: defaults that depend on another setting, and the checks across two. */
const schema = settings.transform(({ databasePassword, ...s }, ctx) => {
  if (databasePassword && !s.databaseUrl)
    ctx.addIssue({ code: "custom", path: ["databasePassword"], message: "set DATABASE_URL too (the password goes into it)" });
  if (s.chargeAmount.min > s.chargeAmount.max) ctx.addIssue({ code: "custom", path: ["chargeAmount", "min"], message: "must not exceed CHARGE_MAX_AMOUNT" });
  const publicUrl = stripSlash(s.publicUrl ?? `http://localhost:${s.port}`);
  return {
    ...s,
    publicUrl,
    paymentBaseUrl: stripSlash(s.paymentBaseUrl ?? `${publicUrl}/pay`),
    databaseUrl: s.databaseUrl && withPassword(s.databaseUrl, databasePassword),
    shutdownDelayMs: s.shutdownDelayMs ?? (s.env === "production" ? 5_000 : 0),
    instanceId: s.instanceId ?? `${hostname()}-${process.pid}`,
    email: { ...s.email, from: s.email.from ?? `no-reply@${new URL(publicUrl).hostname}` },
  };
});

/** Validated service configuration: the settings, and what needs the chains' variables too. */
export type Config = Omit<z.output<typeof schema>, "devnet"> & {
  /** Whether PUBLIC_URL itself was set (not derived from PORT): where the service is reached, whatever port it took. */
  publicUrlGiven: boolean;
  /** Whether PORT was set: with PUBLIC_URL, it makes the CLI talk to that address, not to the one `npm start` recorded. */
  portGiven: boolean;
  /** Chains configured by the operator (CHAIN_<id>_* variables). */
  chains: ChainSettings[];
  /**
   * Whether to run the local anvil devnet (chain 31337): by default for local development only, not in
   * production, not in tests, and not once real chains are configured.
   */
  devnet: boolean;
};

/** Requests per minute: per API key and route group, and per client address for callers without a key. */
export type RateLimits = Config["rateLimits"];

/** Thrown when the environment holds an invalid setting; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The variable of each setting of `shape`, groups included, in order. */
function variablesOf(shape: z.ZodRawShape): string[] {
  return Object.values(shape).flatMap((s) => (s instanceof z.ZodObject ? variablesOf(s.shape) : [variables.get(s)!.variable]));
}

/** The input `shape` parses: each setting's variable from `env`, groups as nested objects. */
function gather(shape: z.ZodRawShape, env: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(shape).map(([key, s]) => [key, s instanceof z.ZodObject ? gather(s.shape, env) : env[variables.get(s)!.variable]]));
}

/** The variable of the setting at `path` in `settings` (a problem names the variable, as the operator wrote it). */
function variableAt(path: PropertyKey[]): string {
  let shape: z.ZodRawShape = settings.shape;
  for (const key of path) {
    const s = shape[key as string]!;
    if (!(s instanceof z.ZodObject)) return variables.get(s)!.variable;
    shape = s.shape;
  }
  return path.join(".");
}

/** The names of every setting (besides the per-chain CHAIN_<id>_* ones): what .env.example must list. */
export function configVariables(): string[] {
  return [...variablesOf(settings.shape), "RELAYER_PRIVATE_KEY"];
}

/** Reads and validates settings from `env` (process.env plus `.env` by default). */
export function loadConfig(env: Record<string, string | undefined> = readProcessEnv()): Config {
  const { env: cleaned, problems } = readSecretFiles(Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => !!e[1])));
  const parsed = schema.safeParse(gather(settings.shape, cleaned));
  // A problem names the variable and what is wrong, never the value: it may be a secret.
  if (!parsed.success) throw invalidConfig([...problems, ...parsed.error.issues.map((i) => `${variableAt(i.path)}: ${i.message}`)]);
  const { devnet, ...s } = parsed.data;
  const chainSettings = parseChainSettings(cleaned, { payoutMinAmount: s.payoutMinAmount });
  problems.push(...chainSettings.problems);
  if (!s.feeRecipient && Object.keys(cleaned).some((k) => /^CHAIN_\d+_/.test(k))) {
    problems.push("FEE_RECIPIENT: required once a chain is configured (the address that receives the protocol fee)");
  }
  if (problems.length > 0) throw invalidConfig(problems);
  const { chains } = chainSettings;
  return {
    ...s,
    publicUrlGiven: cleaned.PUBLIC_URL !== undefined,
    portGiven: cleaned.PORT !== undefined,
    chains,
    devnet: devnet === "true" || (devnet === "auto" && s.env === "development" && chains.length === 0),
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
