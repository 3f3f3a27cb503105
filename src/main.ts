// `npm start`: the whole service in one process on the configured (by default embedded) database:
// the API and, unless RUN_WORKER=false, the background jobs.
import { buildApp } from "./app.js";
import { demoBanner, seedDemoMerchant } from "./cli/demo.js";
import { loadConfig } from "./config.js";
import { startJobs } from "./jobs/index.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const app = await buildApp(config);
const demo = config.env === "production" ? null : await seedDemoMerchant(app.db.prisma, config);
const jobs = config.runWorker ? startJobs(config, app.db, app.logger) : null;
const url = await app.start();
app.logger.info({ url, publicUrl: config.publicUrl, database: app.db.kind, worker: config.runWorker }, "stablegate listening");
if (demo) process.stdout.write(demoBanner(demo, config.publicUrl));
runUntilSignal(app.logger, async () => {
  await jobs?.stop();
  await app.stop();
});
