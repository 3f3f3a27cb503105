// `npm run worker`: the background jobs alone, for production next to any number of API processes.
import { pino } from "pino";
import { loadConfig } from "./config.js";
import { openDatabase } from "./db/client.js";
import { migrate } from "./db/migrate.js";
import { startJobs } from "./jobs/index.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const logger = pino({ level: config.logLevel, base: { service: "stablegate-worker" } });
const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize });
await migrate(db);
const jobs = startJobs(config, db, logger);
logger.info({ database: db.kind }, "stablegate worker running");
runUntilSignal(logger, async () => {
  await jobs.stop();
  await db.close();
});
