// `npm run worker`: the background jobs alone, for production next to any number of API processes.
// It answers /healthz, /readyz and /metrics on WORKER_PORT, so its own counters (webhook delivery
// results) can be scraped and an orchestrator can see it is alive.
import { createOpsServer } from "./app.js";
import { listen } from "./http/server.js";
import { startJobs } from "./jobs/index.js";
import { configOrExit, runUntilSignal, startOrExit } from "./process.js";
import { buildServices, createLogger } from "./services.js";

const config = configOrExit(() => true);
const logger = createLogger(config, "stablegate-worker");
const services = await startOrExit(logger, buildServices(config, { role: "worker", logger }));
// The worker only publishes; API processes receive through Redis. Without it, no API process would hear.
if (!config.redisUrl) logger.warn("REDIS_URL is not set: changes made by this worker will not reach live subscribers of API processes");
const server = createOpsServer(services, true);
// Before the jobs: a port in use (two workers on one host) stops this one before it takes any work.
const url = await listen(server, config.workerPort, config.host).catch((err: NodeJS.ErrnoException) => {
  const hint = err.code === "EADDRINUSE" ? ": give each worker on this host its own WORKER_PORT (0 picks a free one)" : "";
  logger.fatal({ err }, `the worker cannot listen on ${config.host}:${config.workerPort}${hint}`);
  process.exit(1);
});
const jobs = startJobs(services);
// The worker takes no traffic: nothing to leave rotation for, so it stops at once.
runUntilSignal(logger, {
  async stop() {
    await jobs.stop();
    await server.close();
    await services.close();
  },
});
// Only once SIGTERM is handled: whoever waits for this line may stop the process the moment it reads it.
logger.info({ url, database: services.db.kind, chains: services.chains.all().map((c) => c.chainId) }, "stablegate worker running");
