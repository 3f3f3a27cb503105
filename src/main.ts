// `npm start`: the whole service in one process on the configured (by default embedded) database:
// the API, the local devnet in development, and, unless RUN_WORKER=false, the background jobs.
import { existsSync } from "node:fs";
import { buildApp } from "./app.js";
import { startDevnet } from "./chain/devnet.js";
import { demoBanner, demoCredentialsPath, demoShown, seedDemoMerchant } from "./demo.js";
import { instanceUrl, recordInstance } from "./instance.js";
import { startJobs } from "./jobs/index.js";
import { configOrExit, logMode, runUntilSignal, startOrExit } from "./process.js";
import { buildServices, createLogger } from "./services.js";

const config = configOrExit((c) => c.runWorker);
const logger = createLogger(config, "stablegate");
logMode(logger, config);
const services = await startOrExit(
  logger,
  buildServices(config, { role: "all", logger, ...(config.devnet && { startDevnet: () => startDevnet(config.dataDir, logger, config.feeRecipient) }) }),
);
const app = buildApp(services);
// The demo merchant is seeded while the server starts listening: its keys and password hash take
// seconds of a first start. Both are waited for, so that a listen that fails (its port taken) still
// leaves the credentials kept for the next start (demo.ts) before the process ends.
const seeding = config.env === "production" ? Promise.resolve(null) : seedDemoMerchant(services.prisma, config);
const jobs = config.runWorker ? startJobs(services) : null;
const [listening, seeded] = await Promise.allSettled([app.start(), seeding]);
if (listening.status === "rejected") {
  const err = listening.reason as NodeJS.ErrnoException;
  const hint = err.code === "EADDRINUSE" ? ": another process holds this port; stop it, or set PORT to another (0 picks a free one)" : "";
  const kept = existsSync(demoCredentialsPath(config.dataDir))
    ? `; the demo credentials wait in ${demoCredentialsPath(config.dataDir)} for the next start`
    : "";
  logger.fatal({ err }, `stablegate cannot listen on ${config.host}:${config.port} (PORT)${hint}${kept}`);
  process.exit(1);
}
if (seeded.status === "rejected") throw seeded.reason;
const [url, demo] = [listening.value, seeded.value];
// Before the line that says it listens, so whoever waits for that line finds the credentials printed.
if (demo) {
  process.stdout.write(demoBanner(demo, config.publicUrl, services.devnet !== null));
  demoShown(config.dataDir);
}
// Outside production, so that `stablegate devnet pay` and `listen` find this process on whatever port it took.
const forgetInstance = config.env === "production" ? null : recordInstance(config.dataDir, instanceUrl(config, url));
runUntilSignal(logger, {
  leaveRotation: app.leaveRotation,
  delayMs: config.shutdownDelayMs,
  async stop() {
    await jobs?.stop();
    await app.stop();
    // Then the devnet, then the database.
    await services.close();
    forgetInstance?.();
  },
});
// Only once SIGTERM is handled: whoever waits for this line may stop the process the moment it reads it.
logger.info(
  {
    url,
    publicUrl: config.publicUrl,
    database: services.db.kind,
    worker: config.runWorker,
    chains: services.chains.all().map((c) => c.chainId),
  },
  "stablegate listening",
);
