// The composition root of the API process: configuration → database → pub/sub → domain → the doors
// (REST, the hosted page, GraphQL) on one HTTP server. The background jobs are wired by main.ts and
// worker.ts (jobs/index.ts).
import { type Logger, pino } from "pino";
import { authorizationReaders } from "./chain/authorizations.js";
import { ChainSet } from "./chain/chains.js";
import type { DevnetInfo } from "./chain/devnet.js";
import type { Config } from "./config.js";
import type { Database } from "./db/client.js";
import { openGuardedDatabase, recordDatabase } from "./db/marker.js";
import { ensureMigrated } from "./db/migrate.js";
import { ApiKeyAuthenticator } from "./domain/api-keys.js";
import { relayerProblems } from "./domain/chain-status.js";
import { dashboardExportRoutes } from "./dashboard/exports.js";
import { dashboardPages } from "./dashboard/pages.js";
import { dashboardSessionRoutes } from "./dashboard/routes.js";
import { mountGraphQL } from "./graphql/index.js";
import { Bulkhead } from "./http/bulkhead.js";
import { installCors } from "./http/cors.js";
import { RateLimiter } from "./http/rate-limit.js";
import { metricsRoute } from "./http/metrics.js";
import { createServer, leaveRotation, listen } from "./http/server.js";
import { installInputGuard } from "./http/input-guard.js";
import { EventLoopLag } from "./lib/event-loop-lag.js";
import { ProcessMetrics } from "./lib/process-metrics.js";
import { mountPay } from "./pay/index.js";
import { mountRest } from "./rest/index.js";
import type { LiveCharges } from "./realtime/charges.js";
import { closeRevokedConnections, LiveConnections } from "./realtime/connections.js";
import { openRealtime } from "./realtime/index.js";
import { commandConnection } from "./realtime/pubsub.js";

/** A built service: start it on a port, stop it gracefully. */
export interface App {
  readonly db: Database;
  readonly logger: Logger;
  readonly authenticator: ApiKeyAuthenticator;
  /** The chains this service takes payments on. */
  readonly chains: ChainSet;
  /** Announces committed charge changes to subscribers (pass it to jobs run in the same process). */
  readonly live: LiveCharges;
  /** Listens on `port` (default from config; 0 picks a free one) and returns the base URL. */
  start(port?: number): Promise<string>;
  /** Fails /readyz from now on while still serving: the first step of a graceful stop. */
  leaveRotation(): void;
  /** Stops taking requests, waits for those in flight, then closes connections. */
  stop(): Promise<void>;
}

export interface BuildOptions {
  /** An already-open, migrated database; otherwise one is opened from the config and migrated. */
  db?: Database;
  logger?: Logger;
  /** The chains to take payments on; by default the configured ones (main.ts adds the devnet). */
  chains?: ChainSet;
  /** The devnet this process runs, if any: the hosted page then offers "Pay with test wallet" on test charges. */
  devnet?: DevnetInfo;
  /** This process's counters, shared with the jobs it also runs (main.ts); a new set otherwise. */
  metrics?: ProcessMetrics;
}

/** Requests without a key that may wait for the database before more are refused. */
const ANONYMOUS_QUEUE = 200;
/** The largest message a WebSocket client may send (a subscribe message with its query). */
const WS_MAX_PAYLOAD_BYTES = 64 * 1024;

/** The JSON logger every entry point uses: each line names the service and this process (INSTANCE_ID). */
export function createLogger(config: Pick<Config, "logLevel" | "instanceId">, service: string): Logger {
  return pino({ level: config.logLevel, base: { service, instance: config.instanceId } });
}

/**
 * Opens the configured database as `service` (its connections' application_name) and applies pending
 * migrations, or with AUTO_MIGRATE off refuses a database that lacks some: every entry point starts here.
 */
export async function openMigratedDatabase(config: Config, logger: Logger, service: string): Promise<Database> {
  const target = { url: config.databaseUrl, dataDir: config.dataDir };
  // Refuses a database the marker in DATA_DIR says held data but is now empty, before migrating it.
  const db = await openGuardedDatabase(target, { poolSize: config.databasePoolSize, applicationName: `${service} ${config.instanceId}` });
  try {
    const applied = await ensureMigrated(db, config.autoMigrate);
    if (applied.length > 0) logger.info({ migrations: applied }, "database migrated");
    await recordDatabase(target, db);
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}

/** Builds the API service from `config` on `options.db` (already migrated), or on a database it opens and migrates. */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config, "stablegate-api");
  const db = options.db ?? (await openMigratedDatabase(config, logger, "stablegate-api"));

  // Pub/sub: one command connection (rate limits, publishing) and one subscriber connection per process.
  const redis = config.redisUrl ? commandConnection(config.redisUrl, logger) : undefined;
  const { pubsub, live } = openRealtime(config, logger, { subscribe: true, publisher: redis });

  // The domain's settings and services.
  const prisma = db.prisma;
  const chains = options.chains ?? ChainSet.configured(config.chains);
  const charges = {
    amount: config.chargeAmount,
    paymentBaseUrl: config.paymentBaseUrl,
    feed: live,
    gasless: { minAmount: config.gaslessMinAmount },
    factory: chains.factory(),
    payoutMinAmount: config.payoutMinAmount,
  };
  const authenticator = new ApiKeyAuthenticator(prisma, config.authCacheTtlMs);
  // What each chain's USDC says about EIP-3009 authorizations (refunds, payments without gas).
  const authorizations = authorizationReaders(chains);

  // What every door applies to its callers: budgets, and for callers without a key at most half the
  // database connections (keyed requests always find one) and none of the CPU while saturated.
  const rateLimiter = new RateLimiter(config.rateLimits, redis);
  const lag = config.shedAnonymousLagMs > 0 ? new EventLoopLag() : undefined;
  const anonymous = new Bulkhead(Math.max(1, Math.floor(config.databasePoolSize / 2)), ANONYMOUS_QUEUE, lag && { lag, atMs: config.shedAnonymousLagMs });
  const connections = new LiveConnections(config.live.connectionsPerKey);
  const anonymousStreams = new LiveConnections(config.live.streamsPerIp, "this address without an API key");
  const callers = { prisma, authenticator, rateLimiter, anonymous, trustProxy: config.trustProxy, logger };

  // The doors.
  const server = createServer(logger, db, pubsub, {
    problems: () => relayerProblems(prisma, chains.all()),
    trustRequestIds: config.trustProxy > 0,
    publicUrl: config.publicUrl,
  });
  installInputGuard(server, { except: ["/graphql"] });
  installCors(server, config.corsOrigins);
  const metrics = options.metrics ?? new ProcessMetrics();
  metrics.watch({ keyed: connections, anonymous: anonymousStreams, pubsub });
  // main.ts runs the jobs in this process exactly when RUN_WORKER: then its /metrics has the database's figures.
  metricsRoute(server, { config, metrics, db, pubsub, chains: chains.all(), runsJobs: config.runWorker });
  const rest = mountRest(server, { ...callers, charges, chains, authorizations, publicUrl: config.publicUrl });
  mountPay(server, {
    prisma,
    chains,
    charges,
    rateLimiter,
    authorizations,
    publicUrl: config.publicUrl,
    devnet: options.devnet ?? null,
    frameAncestors: config.paymentFrameAncestors,
  });
  dashboardSessionRoutes(server, { prisma, rateLimiter, anonymous, publicUrl: config.publicUrl });
  dashboardExportRoutes(server, { prisma, rateLimiter, publicUrl: config.publicUrl });
  dashboardPages(server);
  const closeGraphQL = mountGraphQL(server, {
    ...callers,
    charges,
    chains,
    authorizations,
    live,
    connections,
    anonymousStreams,
    metrics,
    production: config.env === "production",
    publicUrl: config.publicUrl,
    limits: { subscriptionsPerConnection: config.live.subscriptionsPerConnection, keepAliveMs: config.live.keepAliveMs, maxPayloadBytes: WS_MAX_PAYLOAD_BYTES },
  });
  // A revoked key's live connections close within the time a revoked key keeps working for requests.
  const revocations = closeRevokedConnections(prisma, connections, Math.max(config.authCacheTtlMs, 250), logger);

  return {
    db,
    logger,
    authenticator,
    chains,
    live,
    start: (port = config.port) => listen(server, port, config.host),
    leaveRotation: () => leaveRotation(server),
    async stop() {
      lag?.stop();
      await rest.stop();
      await revocations.stop();
      await closeGraphQL();
      await pubsub.close();
      await server.close();
      redis?.disconnect();
      if (!options.db) await db.close();
    },
  };
}
