// `npm start`: the whole service in one process on the configured (by default embedded) database.
import { buildApp } from "./app.js";
import { demoBanner, seedDemoMerchant } from "./cli/demo.js";
import { loadConfig } from "./config.js";
import { runUntilSignal } from "./process.js";

const config = loadConfig();
const app = await buildApp(config);
const demo = config.env === "production" ? null : await seedDemoMerchant(app.db.prisma, config);
const url = await app.start();
app.logger.info({ url, publicUrl: config.publicUrl, database: app.db.kind }, "stablegate listening");
if (demo) process.stdout.write(demoBanner(demo, config.publicUrl));
runUntilSignal(app.logger, () => app.stop());
