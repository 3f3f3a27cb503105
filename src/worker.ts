// `npm run worker`: the background jobs alone, for production next to any number of API processes.
// It answers /healthz, /readyz and /metrics on WORKER_PORT, so its own counters (webhook delivery
// results) can be scraped and an orchestrator can see it is alive.
import { createLogger, openMigratedDatabase } from "./app.js";
import { ChainSet } from "./chain/chains.js";
import { relayerProblems } from "./domain/chain-status.js";
import { metricsRoute } from "./http/metrics.js";
import { createServer, listen } from "./http/server.js";
import { startJobs } from "./jobs/index.js";
import { ProcessMetrics } from "./lib/process-metrics.js";
import { openRealtime } from "./realtime/index.js";
import { configOrExit, runUntilSignal, startOrExit } from "./process.js";

const config = configOrExit(() => true);
const logger = createLogger(config, "stablegate-worker");
const db = await startOrExit(logger, openMigratedDatabase(config, logger, "stablegate-worker"));
const chains = ChainSet.configured(config.chains);
// The worker only publishes; API processes receive through Redis. Without it, no API process would hear.
if (!config.redisUrl) logger.warn("REDIS_URL is not set: changes made by this worker will not reach live subscribers of API processes");
const realtime = openRealtime(config, logger, { subscribe: false });
const metrics = new ProcessMetrics();
const server = createServer(logger, db, realtime.pubsub, { problems: () => relayerProblems(db.prisma, chains.all()), publicUrl: config.publicUrl });
metricsRoute(server, { config, metrics, db, pubsub: realtime.pubsub, chains: chains.all(), runsJobs: true });
// Before the jobs: a port in use (two workers on one host) stops this one before it takes any work.
const url = await listen(server, config.workerPort, config.host).catch((err: NodeJS.ErrnoException) => {
  const hint = err.code === "EADDRINUSE" ? ": give each worker on this host its own WORKER_PORT (0 picks a free one)" : "";
  logger.fatal({ err }, `the worker cannot listen on ${config.host}:${config.workerPort}${hint}`);
  process.exit(1);
});
const jobs = startJobs(config, db, chains, logger, { feed: realtime.live, metrics });
logger.info({ url, database: db.kind, chains: chains.all().map((c) => c.chainId) }, "stablegate worker running");
// The worker takes no traffic: nothing to leave rotation for, so it stops at once.
runUntilSignal(logger, {
  async stop() {
    await jobs.stop();
    await server.close();
    await realtime.pubsub.close();
    await db.close();
  },
});
