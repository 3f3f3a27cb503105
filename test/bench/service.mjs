// What the benchmarks that run the real service share: its environment, a free port, readiness,
// and a merchant to call it with.
import { execFileSync } from "node:child_process";
import net from "node:net";

/** The service's environment on `databaseUrl`: production, quiet, no Redis, budgets a benchmark cannot run out of. */
export function serviceEnv(databaseUrl, extra = {}) {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: "",
    NODE_ENV: "production",
    LOG_LEVEL: "warn",
    PORT: "0",
    RATE_LIMIT_CREATE: "1000000",
    RATE_LIMIT_READ: "1000000",
    RATE_LIMIT_LIST: "1000000",
    ...extra,
  };
}

/** A TCP port nothing listens on right now. */
export function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once `target` answers 2xx (30 s at most). */
export async function waitReady(target) {
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(target)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${target} never became ready`);
}

/** Creates a merchant with a test wallet through the CLI; returns its id and test key. */
export function createBenchMerchant(env) {
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      ["dist/cli/main.js", "merchant", "create", "--name", "Bench", "--test-wallet", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "--json"],
      {
        env,
        encoding: "utf8",
      },
    ),
  );
  return { merchantId: created.merchant.id, key: created.apiKeys.test.secret };
}
