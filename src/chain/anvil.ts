// Runs anvil (Foundry's local EVM node) from its npm package (`@foundry-rs/anvil-<os>-<arch>`, the
// binary inside): no download, no network. Used for the local devnet of `npm start` and the chain
// tests. Only the linux-amd64 package is a dependency: the others are not on the registry mirror this
// project is locked against; elsewhere, `npm install @foundry-rs/anvil` adds the right one.
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** A running anvil. */
export interface Anvil {
  /** JSON-RPC URL on loopback. */
  url: string;
  chainId: number;
  stop(): Promise<void>;
}

export interface AnvilOptions {
  /** Load the chain from this file at start and keep writing it (see `stateIntervalSeconds`). */
  statePath?: string;
  /** How often anvil writes `statePath` (it also writes it on a clean exit). */
  stateIntervalSeconds?: number;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The chain id anvil reports (default: the devnet's, 31337); tests stand in for a testnet with it. */
  chainId?: number;
}

export const DEVNET_CHAIN_ID = 31337;

/** The path of the anvil binary for this platform, from its npm package. */
export function anvilBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    const dir = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
    return join(dir, "bin", process.platform === "win32" ? "anvil.exe" : "anvil");
  } catch {
    throw new Error(`anvil is not installed for ${process.platform}-${process.arch}: run npm install --no-save ${pkg} (or set DEVNET=false)`);
  }
}

/**
 * A small node process between us and anvil (`node -e GUARD -- anvil args…`): it passes signals on,
 * exits with anvil, and stops anvil once the process that started it is gone, even killed with
 * SIGKILL, which runs no cleanup of ours. (A native binary cannot be told to watch its parent.)
 */
const GUARD = `
const { spawn } = require("node:child_process");
const [binary, ...args] = process.argv.slice(1);
const parent = process.ppid;
const anvil = spawn(binary, args, { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => anvil.kill(signal));
anvil.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
setInterval(() => { if (process.ppid !== parent) anvil.kill("SIGTERM"); }, 250);
`;

/** Starts anvil on 127.0.0.1 and resolves once it accepts requests; it stops when this process ends, however it ends. */
export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const chainId = options.chainId ?? DEVNET_CHAIN_ID;
  const args = ["--host", "127.0.0.1", "--port", String(options.port ?? 0), "--chain-id", String(chainId)];
  if (options.statePath) args.push("--state", options.statePath, "--state-interval", String(options.stateIntervalSeconds ?? 1));
  // Its own process group, so a last-resort SIGKILL reaches anvil as well as its guard.
  const child = spawn(process.execPath, ["-e", GUARD, "--", anvilBinary(), ...args], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      killGroup(child, "SIGKILL");
      reject(new Error(`anvil ${why}:\n${output.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail("did not start within 30 s"), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve({ url: `http://127.0.0.1:${m[1]}`, chainId, stop: () => stopChild(child) });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => (output += d));
    child.once("error", (e) => fail(e.message));
    child.once("exit", (code) => fail(`exited with ${code}`));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.removeAllListeners("exit");
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    // SIGTERM lets anvil write its state file before exiting.
    child.kill("SIGTERM");
    setTimeout(() => killGroup(child, "SIGKILL"), 5_000).unref();
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}
