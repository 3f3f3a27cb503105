// `npm start`: the whole service in one process on the configured (by default embedded) database:
// the API, the local devnet in development, and, unless RUN_WORKER=false, the background jobs.
import { buildApp, createLogger, openMigratedDatabase } from "./app.js";
import { ChainSet } from "./chain/chains.js";
import { startDevnet } from "./chain/devnet.js";
import { demoBanner, seedDemoMerchant } from "./demo.js";
import { startJobs } from "./jobs/index.js";
import { ProcessMetrics } from "./lib/process-metrics.js";
import { configOrExit, logMode, runUntilSignal, startOrExit } from "./process.js";

const config = configOrExit((c) => c.runWorker);
const logger = createLogger(config, "stablegate");
logMode(logger, config);
const db = await startOrExit(logger, openMigratedDatabase(config, logger, "stablegate"));
const devnet = config.devnet ? await startDevnet(config.dataDir, logger, config.feeRecipient) : null;
const chains = ChainSet.configured(config.chains, devnet ? [devnet.chain] : []);
// One set of counters for the API and the jobs this process runs: its /metrics shows both.
const metrics = new ProcessMetrics();
const app = await buildApp(config, { db, logger, chains, metrics, ...(devnet && { devnet: devnet.info }) });
const demo = config.env === "production" ? null : await seedDemoMerchant(app.db.prisma, config);
const jobs = config.runWorker ? startJobs(config, db, chains, logger, { feed: app.live, metrics }) : null;
const url = await app.start();
logger.info(
  { url, publicUrl: config.publicUrl, database: db.kind, worker: config.runWorker, chains: chains.all().map((c) => c.chainId) },
  "stablegate listening",
);
if (demo) process.stdout.write(demoBanner(demo, config.publicUrl, devnet !== null));
runUntilSignal(logger, {
  leaveRotation: app.leaveRotation,
  delayMs: config.shutdownDelayMs,
  async stop() {
    await jobs?.stop();
    await app.stop();
    await devnet?.stop();
    await db.close();
  },
});
