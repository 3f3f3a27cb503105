// `npm run worker`: the background jobs alone, for production next to any number of API processes.
import { createLogger } from "./app.js";
import { ChainSet, enableChain } from "./chain/chains.js";
import { loadConfig } from "./config.js";
import { openDatabase } from "./db/client.js";
import { migrate } from "./db/migrate.js";
import { startJobs } from "./jobs/index.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const logger = createLogger(config, "stablegate-worker");
const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
await migrate(db);
const chains = new ChainSet(config.chains.map((c) => enableChain(c)));
const jobs = startJobs(config, db, chains, logger);
logger.info({ database: db.kind, chains: chains.all().map((c) => c.chainId) }, "stablegate worker running");
runUntilSignal(logger, async () => {
  await jobs.stop();
  await db.close();
});
