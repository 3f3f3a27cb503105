// The composition root every entry point starts from (npm start, the API, the worker, the CLI): the
// database (opened and migrated), the chains, live updates, the limits callers share, this process's
// counters, its logger and the one settings object the domain reads. The doors are mounted on it by
// app.ts, the background jobs started on it by jobs/index.ts.
import type { Redis } from "ioredis";
import { type Logger, pino } from "pino";
import { authorizationReaders } from "./chain/authorizations.js";
import { ChainSet } from "./chain/chains.js";
import type { Devnet, DevnetInfo } from "./chain/devnet.js";
import type { Config } from "./config.js";
import type { Database } from "./db/client.js";
import { openGuardedDatabase, recordDatabase } from "./db/marker.js";
import { ensureMigrated } from "./db/migrate.js";
import { readTemplate } from "./db/template.js";
import { ApiKeyAuthenticator } from "./domain/api-keys.js";
import { type ChargeSettings, DEFAULT_PAYOUT_MIN_AMOUNT } from "./domain/charges/settings.js";
import { announceCommittedEvents } from "./domain/events.js";
import type { PaymentSettings } from "./domain/payments.js";
import { Bulkhead } from "./http/bulkhead.js";
import { HostedPages, pageTokenSecret } from "./http/hosted-pages.js";
import { RateLimiter } from "./http/rate-limit.js";
import { EventLoopLag } from "./lib/event-loop-lag.js";
import { ProcessMetrics } from "./lib/process-metrics.js";
import type { LiveCharges } from "./realtime/charges.js";
import { openRealtime } from "./realtime/index.js";
import { onWebhooksDue, ringWebhooksOnCommit } from "./realtime/doorbell.js";
import { commandConnection, type PubSub } from "./realtime/pubsub.js";
import { ChargeTermsCache } from "./domain/charges/terms.js";

/**
 * What a process is: it names the process in logs and database connections, and decides its
 * live-update connections (only processes that serve subscribe; the CLI stays off Redis).
 */
export type Role = "all" | "api" | "worker" | "cli";

const SERVICE_NAMES: Record<Role, string> = {
  all: "stablegate",
  api: "stablegate-api",
  worker: "stablegate-worker",
  cli: "stablegate-cli",
};

/** The CLI runs one command at a time: a pool of two is plenty and leaves the service its connections. */
const CLI_POOL_SIZE = 2;
/** Requests without a key that may wait for the database before more are refused. */
const ANONYMOUS_QUEUE = 200;

/** The domain's settings: what creating charges and settling payments read (one object for doors and jobs). */
export type DomainSettings = ChargeSettings & PaymentSettings;

export interface ServicesOptions {
  /** Default "api". */
  role?: Role;
  /** An already-open, migrated database (tests): used as is and left open by close(). */
  db?: Database;
  logger?: Logger;
  /** The chains to take payments on; by default the configured ones plus the started devnet's. */
  chains?: ChainSet;
  /** A devnet already running (tests): the hosted page then offers "Pay with test wallet" on test charges. */
  devnet?: DevnetInfo;
  /**
   * Starts the devnet this process runs (`npm start` in development) once the database is open: its
   * chain is taken with the configured ones, the hosted page offers its test wallet, close() stops it.
   */
  startDevnet?: () => Promise<Devnet>;
  /** Applies pending migrations even with AUTO_MIGRATE off (`stablegate migrate`). */
  migrate?: boolean;
}

/** The pieces a process is built from; close() releases what buildServices opened. */
export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Database;
  readonly prisma: Database["prisma"];
  /** The migrations applied when the database was opened (none when it was given). */
  readonly migrations: string[];
  /** The chains this process takes payments on. */
  readonly chains: ChainSet;
  readonly devnet: DevnetInfo | null;
  /** What each chain's USDC says about EIP-3009 authorizations (refunds, payments without gas). */
  readonly authorizations: ReturnType<typeof authorizationReaders>;
  readonly pubsub: PubSub;
  /** Announces committed charge changes to subscribers (the doors' and the jobs' feed). */
  readonly live: LiveCharges;
  readonly authenticator: ApiKeyAuthenticator;
  readonly rateLimiter: RateLimiter;
  /** For callers without a key: at most half the database connections, none of the CPU while saturated. */
  readonly anonymous: Bulkhead;
  /** The hosted pages' own requests (their tokens): a lane of their own beside the anonymous one, never shed with it. */
  readonly hostedPages: HostedPages;
  /** This process's counters, shared by the doors and the jobs it runs: its /metrics shows both. */
  readonly metrics: ProcessMetrics;
  /** With Redis, listens for other processes' commits that queued webhook deliveries (the dispatcher's doorbell). */
  readonly webhooksDue?: (ring: () => void) => () => void;
  readonly settings: DomainSettings;
  close(): Promise<void>;
}

/** The JSON logger every entry point uses: each line names the service and this process (INSTANCE_ID). */
export function createLogger(config: Pick<Config, "logLevel" | "instanceId">, service: string): Logger {
  return pino({ level: config.logLevel, base: { service, instance: config.instanceId } });
}

/**
 * Opens the configured database as `service` (its connections' application_name) and applies pending
 * migrations (`force`: even with AUTO_MIGRATE off, which otherwise refuses a database that lacks some).
 */
async function openMigratedDatabase(
  config: Config,
  logger: Logger,
  service: string,
  { poolSize, force }: { poolSize: number; force: boolean },
): Promise<{ db: Database; migrations: string[] }> {
  const target = { url: config.databaseUrl, dataDir: config.dataDir };
  // Refuses a database the marker in DATA_DIR says held data but is now empty, before migrating it.
  // A first start of the embedded database begins from the build's migrated template (src/db/template.ts).
  const db = await openGuardedDatabase(target, {
    poolSize,
    applicationName: `${service} ${config.instanceId}`,
    template: readTemplate,
    onTemplateFailed: (err) => logger.warn({ err }, "the database template did not load: the database begins without it, and the migrations fill it"),
  });
  try {
    const migrations = await ensureMigrated(db, force || config.autoMigrate);
    if (migrations.length > 0) logger.info({ migrations }, "database migrated");
    await recordDatabase(target, db);
    return { db, migrations };
  } catch (e) {
    await db.close();
    throw e;
  }
}

/** Builds the pieces of a `role` process from `config`; `options` replaces some (tests, the devnet of `npm start`). */
export async function buildServices(config: Config, options: ServicesOptions = {}): Promise<Services> {
  const role = options.role ?? "api";
  const service = SERVICE_NAMES[role];
  const logger = options.logger ?? createLogger(config, service);
  const opened = options.db
    ? { db: options.db, migrations: [] }
    : await openMigratedDatabase(config, logger, service, {
        poolSize: role === "cli" ? CLI_POOL_SIZE : config.databasePoolSize,
        force: options.migrate ?? false,
      });
  const { db } = opened;
  const devnet = options.startDevnet ? await options.startDevnet().catch((e: unknown) => closeAndThrow(db, options, e)) : null;
  // PAYOUT_MIN_AMOUNT is the devnet's minimum too (no CHAIN_ variable configures the devnet).
  const devnetChain = devnet && (config.payoutMinAmount === undefined ? devnet.chain : { ...devnet.chain, payoutMinAmount: config.payoutMinAmount });
  const chains = options.chains ?? ChainSet.configured(config.chains, devnetChain ? [devnetChain] : []);

  // Pub/sub: a process has one command connection (publishing, and in a serving process the rate
  // limits) and one subscriber connection (live updates in a serving process, the webhook doorbell in
  // every one); the CLI stays in-process.
  const serves = role === "all" || role === "api";
  const redis: Redis | undefined = serves && config.redisUrl ? commandConnection(config.redisUrl, logger) : undefined;
  const { pubsub, live } = openRealtime(role === "cli" ? { ...config, redisUrl: undefined } : config, logger, {
    subscribe: role !== "cli",
    publisher: redis,
  });

  // Every event this process commits reaches subscribers (the CLI's in-process feed has none, but
  // without a feed a root client's events would be kept for announcing forever), and through Redis
  // rings the other processes' webhook dispatchers when it queued deliveries (in one process the dispatcher hears itself).
  announceCommittedEvents(db.prisma, live);
  const ringing = pubsub.distributed ? ringWebhooksOnCommit(db.prisma, pubsub) : undefined;

  const lag = serves && config.shedAnonymousLagMs > 0 ? new EventLoopLag() : undefined;
  const anonymous = new Bulkhead(Math.max(1, Math.floor(config.databasePoolSize / 2)), ANONYMOUS_QUEUE, lag && { lag, atMs: config.shedAnonymousLagMs });
  // A quarter of the database beside the anonymous half: keyed requests still always find a connection.
  const rateLimiter = new RateLimiter(config.rateLimits, redis);
  const pageSecret = pageTokenSecret(config.pageTokenSecret, config.databaseUrl);
  const hostedPages = new HostedPages(pageSecret, new Bulkhead(Math.max(1, Math.floor(config.databasePoolSize / 4)), ANONYMOUS_QUEUE), rateLimiter);
  // Several API processes share Redis: a page one of them drew must be recognised by the others.
  if (serves && config.redisUrl && pageSecret === undefined) {
    logger.warn(
      "PAGE_TOKEN_SECRET is unset: a hosted page served by one API process is not recognised by another, and its requests may be shed with anonymous ones",
    );
  }

  return {
    config,
    logger,
    db,
    prisma: db.prisma,
    migrations: opened.migrations,
    chains,
    devnet: devnet?.info ?? options.devnet ?? null,
    authorizations: authorizationReaders(chains),
    pubsub,
    live,
    authenticator: new ApiKeyAuthenticator(db.prisma, config.authCacheTtlMs),
    rateLimiter,
    anonymous,
    hostedPages,
    metrics: new ProcessMetrics(config.gitCommit),
    webhooksDue: ringing && ((ring) => onWebhooksDue(pubsub, ring, ringing.ringer)),
    settings: {
      amount: config.chargeAmount,
      paymentBaseUrl: config.paymentBaseUrl,
      publicUrl: config.publicUrl,
      partialExtensionMinutes: config.partialExtensionMinutes,
      payoutMinAmount: config.payoutMinAmount ?? DEFAULT_PAYOUT_MIN_AMOUNT,
      gasless: { minAmount: config.gaslessMinAmount },
      x402: { minAmount: config.x402MinAmount, settleTimeoutMs: config.x402SettleTimeoutMs },
      relayerGasBudget: config.relayerGasBudgetPerMerchant,
      factory: chains.factory(),
      terms: new ChargeTermsCache(),
      chains: chains.all().map(({ chainId, testnet }) => ({ chainId, testnet })),
      // The CLI's changes reach no subscriber: it has none, and stays off Redis.
      feed: role === "cli" ? undefined : live,
    },
    async close() {
      ringing?.stop();
      lag?.stop();
      await pubsub.close();
      redis?.disconnect();
      await devnet?.stop();
      if (!options.db) await db.close();
    },
  };
}

/** Closes the database buildServices opened (not one it was given) and rethrows `error`. */
async function closeAndThrow(db: Database, options: ServicesOptions, error: unknown): Promise<never> {
  if (!options.db) await db.close();
  throw error;
}
