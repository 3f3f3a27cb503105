// `npm run worker`: the background jobs alone, for production next to any number of API processes.
import { createLogger, openMigratedDatabase } from "./app.js";
import { ChainSet } from "./chain/chains.js";
import { loadConfig } from "./config.js";
import { startJobs } from "./jobs/index.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const logger = createLogger(config, "stablegate-worker");
const db = await openMigratedDatabase(config, logger);
const chains = ChainSet.configured(config.chains);
const jobs = startJobs(config, db, chains, logger);
logger.info({ database: db.kind, chains: chains.all().map((c) => c.chainId) }, "stablegate worker running");
runUntilSignal(logger, async () => {
  await jobs.stop();
  await db.close();
});
