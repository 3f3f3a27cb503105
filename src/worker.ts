// `npm run worker`: the background jobs alone, for production next to any number of API processes.
// It answers /healthz, /readyz and /metrics on WORKER_PORT, so its own counters (webhook delivery
// results) can be scraped and an orchestrator can see it is alive.
import { createLogger, openMigratedDatabase } from "./app.js";
import { ChainSet } from "./chain/chains.js";
import { loadConfig } from "./config.js";
import { relayerProblems } from "./domain/chain-status.js";
import { metricsRoute } from "./http/metrics.js";
import { createServer, listen } from "./http/server.js";
import { startJobs } from "./jobs/index.js";
import { ProcessMetrics } from "./lib/process-metrics.js";
import { openRealtime } from "./realtime/index.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const logger = createLogger(config, "stablegate-worker");
const db = await openMigratedDatabase(config, logger);
const chains = ChainSet.configured(config.chains);
// The worker only publishes; API processes receive through Redis. Without it, no API process would hear.
if (!config.redisUrl) logger.warn("REDIS_URL is not set: changes made by this worker will not reach live subscribers of API processes");
const realtime = openRealtime(config, logger, { subscribe: false });
const metrics = new ProcessMetrics();
const server = createServer(logger, db, realtime.pubsub, () => relayerProblems(db.prisma, chains.all()));
metricsRoute(server, db.prisma, config.metricsToken, metrics, chains.all());
// Before the jobs: a port in use (two workers on one host) stops this one before it takes any work.
const url = await listen(server, config.workerPort, config.host).catch((err: NodeJS.ErrnoException) => {
  const hint = err.code === "EADDRINUSE" ? ": give each worker on this host its own WORKER_PORT (0 picks a free one)" : "";
  logger.fatal({ err }, `the worker cannot listen on ${config.host}:${config.workerPort}${hint}`);
  process.exit(1);
});
const jobs = startJobs(config, db, chains, logger, { feed: realtime.live, metrics });
logger.info({ url, database: db.kind, chains: chains.all().map((c) => c.chainId) }, "stablegate worker running");
runUntilSignal(logger, async () => {
  await jobs.stop();
  await server.close();
  await realtime.pubsub.close();
  await db.close();
});
