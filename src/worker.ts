// `npm run worker`: the background jobs alone, for production next to any number of API processes.
import { createLogger, openMigratedDatabase } from "./app.js";
import { ChainSet } from "./chain/chains.js";
import { loadConfig } from "./config.js";
import { startJobs } from "./jobs/index.js";
import { openRealtime } from "./realtime/index.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const logger = createLogger(config, "stablegate-worker");
const db = await openMigratedDatabase(config, logger);
const chains = ChainSet.configured(config.chains);
// The worker only publishes; API processes receive through Redis. Without it, no API process would hear.
if (!config.redisUrl) logger.warn("REDIS_URL is not set: changes made by this worker will not reach live subscribers of API processes");
const realtime = openRealtime(config, logger, { subscribe: false });
const jobs = startJobs(config, db, chains, logger, { feed: realtime.live });
logger.info({ database: db.kind, chains: chains.all().map((c) => c.chainId) }, "stablegate worker running");
runUntilSignal(logger, async () => {
  await jobs.stop();
  await realtime.pubsub.close();
  await db.close();
});
