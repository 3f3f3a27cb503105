// What the chain benchmarks share: stopping everything they started whatever happens, counting the
// worker's warnings and errors, and a chain enabled as the service enables one (registry defaults).
import { pino } from "pino";
import { enableChain } from "../../dist/chain/chains.js";
import { knownChain } from "../../dist/chain/registry.js";

/** A stack of stops (`push([what, fn])`), run newest first by `runAll`; one that fails or hangs is logged and passed. */
export function cleanups(log) {
  const stack = [];
  return {
    push: (entry) => stack.push(entry),
    async runAll() {
      while (stack.length > 0) {
        const [what, fn] = stack.pop();
        try {
          await Promise.race([fn(), sleep(10_000).then(() => Promise.reject(new Error("took over 10 s")))]);
        } catch (e) {
          log(`cleanup of ${what} failed: ${e.message}`);
        }
      }
    },
  };
}

/** A pino logger for the worker that counts its warnings and errors (`counts`) and echoes the first few of each to stderr. */
export function countingLogger() {
  const counts = { warn: 0, error: 0, messages: {} };
  const logger = pino(
    { level: "info" },
    {
      write(line) {
        const rec = JSON.parse(line);
        if (rec.level < 40) return;
        const level = rec.level >= 50 ? "error" : "warn";
        counts[level]++;
        const key = `${level}: ${rec.msg}${rec.err ? ` (${String(rec.err).slice(0, 160)})` : ""}`;
        counts.messages[key] = (counts.messages[key] ?? 0) + 1;
        if (counts.messages[key] <= 3) console.error(`[worker ${level}] ${line.trim()}`);
      },
    },
  );
  return { logger, counts };
}

/** Chain `chainId` as the service enables it, with the registry's defaults for what is not given. */
export function benchChain({ chainId, rpcUrl, factory, feeRecipient, relayerKey, usdc, confirmations = 1 }) {
  const registry = knownChain(chainId);
  return enableChain(
    {
      chainId,
      rpcUrls: [rpcUrl],
      factory,
      feeRecipient,
      confirmations,
      relayerKey,
      relayerMinBalance: registry.minRelayerBalance,
      maxFeePerGas: registry.maxFeePerGas,
      stuckAfterSeconds: registry.stuckAfterSeconds,
      watchTokens: [],
    },
    usdc,
  );
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** The `p`th percentile of `xs` (nearest rank), to a tenth; null when there is none. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))], 1) : null;
}

/**
 * A bench's clock: `log` to stderr with the seconds since it started, and `waitFor` that polls `check`
 * until it returns a value, failing after `timeoutMs` or past the run's deadline (BENCH_DEADLINE_SECONDS,
 * 290 s by default), so a stuck run still cleans up and exits; a minute past the deadline the process
 * exits whatever it is doing.
 */
export function benchClock(label, { everyMs: defaultEvery = 50 } = {}) {
  const started = Date.now();
  const deadlineAt = started + Number(process.env.BENCH_DEADLINE_SECONDS ?? 290) * 1000;
  const log = (...a) => console.error(`[${label} ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);
  async function waitFor(what, check, { timeoutMs = 60_000, everyMs = defaultEvery } = {}) {
    const deadline = Math.min(Date.now() + timeoutMs, deadlineAt);
    for (;;) {
      const value = await check();
      if (value !== undefined && value !== false && value !== null) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(everyMs);
    }
  }
  const watchdog = setTimeout(
    () => {
      log("watchdog: the run is far past its deadline; exiting");
      process.exit(2);
    },
    deadlineAt - started + 60_000,
  );
  watchdog.unref();
  return { started, log, waitFor };
}
