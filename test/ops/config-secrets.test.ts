// Secrets in the configuration: every secret setting can come from a file (NAME_FILE, a mounted
// secret); no problem report ever prints a setting's value, whichever setting is wrong and however;
// only processes that send transactions need a relayer key.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { getAddress, Wallet } from "ethers";
import { afterAll, describe, expect, it } from "vitest";
import { factoryV2Address } from "../../src/chain/clones.js";
import { ConfigError, configVariables, loadConfig, requireRelayerKeys } from "../../src/config.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "sg-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SENTINEL = "S3cretPassw0rd";
const FEE_RECIPIENT = getAddress("0x00000000000000000000000000000000000fee01");
const CHAIN = { CHAIN_8453_RPC_URL: "https://base.example", CHAIN_8453_FACTORY: factoryV2Address(FEE_RECIPIENT), FEE_RECIPIENT };

function file(name: string, contents: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${contents}\n`);
  return path;
}

/** The message `load` throws, or null. */
function problem(load: () => unknown): string | null {
  try {
    load();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
}

describe("secrets from files", () => {
  it("reads DATABASE_URL, DATABASE_PASSWORD, REDIS_URL, METRICS_TOKEN, RPC URLs and relayer keys from NAME_FILE", () => {
    const key = Wallet.createRandom().privateKey;
    const config = loadConfig({
      ...CHAIN,
      CHAIN_8453_RPC_URL: "",
      CHAIN_8453_RPC_URL_FILE: file("rpc", "https://base.example/v2/provider-key"),
      DATABASE_URL_FILE: file("database-url", "postgresql://stablegate@db.internal:5432/stablegate"),
      DATABASE_PASSWORD_FILE: file("database-password", "p@ss word/with:specials"),
      REDIS_URL_FILE: file("redis-url", "redis://cache.internal:6379"),
      METRICS_TOKEN_FILE: file("metrics-token", "a-token-of-at-least-sixteen"),
      RELAYER_PRIVATE_KEY_FILE: file("relayer", key),
    });
    const url = new URL(config.databaseUrl!);
    expect(decodeURIComponent(url.password)).toBe("p@ss word/with:specials");
    expect(url.host).toBe("db.internal:5432");
    expect(config.redisUrl).toBe("redis://cache.internal:6379");
    expect(config.metricsToken).toBe("a-token-of-at-least-sixteen");
    expect(config.chains[0]).toMatchObject({ rpcUrls: ["https://base.example/v2/provider-key"], relayerKey: key });
  });

  it("names the variable and the path of a file it cannot read, not both forms at once", () => {
    expect(problem(() => loadConfig({ METRICS_TOKEN_FILE: join(dir, "missing") }))).toMatch(/METRICS_TOKEN_FILE: cannot read .*missing \(ENOENT\)/);
    expect(problem(() => loadConfig({ REDIS_URL: "redis://a:6379", REDIS_URL_FILE: file("r2", "redis://b:6379") }))).toMatch(
      "REDIS_URL_FILE: set either REDIS_URL or REDIS_URL_FILE, not both",
    );
    expect(problem(() => loadConfig({ DATABASE_PASSWORD: "x" }))).toMatch("DATABASE_PASSWORD: set DATABASE_URL too");
  });
});

describe("no value is ever printed", () => {
  // Wrong in every way a value can be wrong, and each carrying the sentinel.
  const wrong = [`postgresx://stablegate:${SENTINEL}@db/x`, `${SENTINEL}`, `-1${SENTINEL}`, `0x${SENTINEL}`, `https://${SENTINEL} nope`, `${SENTINEL}!`];
  const names = [
    ...configVariables(),
    ...[
      "RPC_URL",
      "FACTORY",
      "FACTORY_V1",
      "CONFIRMATIONS",
      "RELAYER_KEY",
      "RELAYER_MIN_BALANCE",
      "GASLESS_DAILY_GAS",
      "MAX_FEE_PER_GAS",
      "RELAYER_STUCK_AFTER",
      "WATCH_TOKENS",
      "USDC",
    ].map((k) => `CHAIN_8453_${k}`),
  ];

  it("whichever setting is wrong: the problem names it and never quotes it", () => {
    let refused = 0;
    for (const name of names) {
      for (const value of wrong) {
        const message = problem(() => loadConfig({ ...CHAIN, RELAYER_PRIVATE_KEY: Wallet.createRandom().privateKey, [name]: value }));
        if (message === null) continue;
        refused++;
        expect(message, `${name}=${value}`).not.toContain(SENTINEL);
        expect(message, `${name}=${value}`).toContain(name.replace(/^CHAIN_8453_RELAYER_KEY$/, "RELAYER_KEY"));
      }
    }
    // Most settings refuse most of these values: the loop checked something.
    expect(refused).toBeGreaterThan(names.length * 2);
  });

  it("a process started with a bad DATABASE_URL exits 1 naming it, without the password or a stack trace", async () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: join(dir, "data"), DATABASE_URL: `postgresx://stablegate:${SENTINEL}@db/x` };
    for (const entry of ["dist/main.js", "dist/worker.js", "dist/cli/main.js"]) {
      const args = entry === "dist/cli/main.js" ? [entry, "migrate"] : [entry];
      const failed = await run(process.execPath, args, { env, timeout: 30_000 }).then(
        () => null,
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(failed, entry).not.toBeNull();
      expect(failed!.code, entry).toBe(1);
      expect(failed!.stderr, entry).toMatch(/DATABASE_URL/);
      expect(failed!.stdout + failed!.stderr, entry).not.toContain(SENTINEL);
      expect(failed!.stderr, entry).not.toMatch(/\n\s+at /);
    }
  });

  it("a process whose well-formed DATABASE_URL reaches no server exits 1 with one line naming the variable and the cause", async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: join(dir, "unreachable"),
      DATABASE_URL: `postgresql://stablegate:${SENTINEL}@127.0.0.1:1/stablegate`,
      DEVNET: "false",
      RELAYER_PRIVATE_KEY: Wallet.createRandom().privateKey,
      WORKER_PORT: "0",
      PORT: "0",
    };
    const line = "Cannot connect to the PostgreSQL database in DATABASE_URL (127.0.0.1:1/stablegate): connect ECONNREFUSED 127.0.0.1:1";
    for (const entry of ["dist/main.js", "dist/worker.js", "dist/cli/main.js"]) {
      const args = entry === "dist/cli/main.js" ? [entry, "merchant", "list"] : [entry];
      const failed = await run(process.execPath, args, { env, timeout: 30_000 }).then(
        () => null,
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(failed, entry).not.toBeNull();
      expect(failed!.code, entry).toBe(1);
      const out = failed!.stdout + failed!.stderr;
      expect(out, entry).not.toContain(SENTINEL);
      expect(out, entry).not.toMatch(/\n\s+at |pg-pool/);
      if (entry === "dist/cli/main.js") {
        expect(failed!.stderr).toBe(`Error: ${line}\n`);
      } else {
        // The services log JSON: the last line is the fatal one, the message whole.
        const fatal = JSON.parse(out.trim().split("\n").at(-1)!) as { level: number; msg: string };
        expect(fatal, entry).toMatchObject({ level: 60, msg: line });
      }
    }
  });
});

describe("relayer keys", () => {
  it("are needed only where transactions are sent: the API and migrate start without one, the worker does not", () => {
    const config = loadConfig(CHAIN);
    expect(config.chains[0]!.relayerKey).toBe("");
    expect(() => requireRelayerKeys(config)).toThrow(/CHAIN_8453_RELAYER_KEY or RELAYER_PRIVATE_KEY: required/);
    expect(() => requireRelayerKeys(loadConfig({ ...CHAIN, RELAYER_PRIVATE_KEY: Wallet.createRandom().privateKey }))).not.toThrow();
    // A malformed key is refused everywhere, whoever would use it.
    expect(problem(() => loadConfig({ ...CHAIN, RELAYER_PRIVATE_KEY: "0xabc" }))).toMatch(/RELAYER_PRIVATE_KEY/);
  });

  it("the worker refuses to start without one, naming the variable", async () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...CHAIN, NODE_ENV: "production", DATA_DIR: join(dir, "worker") };
    const failed = await run(process.execPath, ["dist/worker.js"], { env, timeout: 30_000 }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/CHAIN_8453_RELAYER_KEY or RELAYER_PRIVATE_KEY: required/);
  });
});
