// The service's real entry points (dist/main.js, dist/worker.js) as child processes, for tests that
// start, kill and restart them.
import { type ChildProcess, spawn } from "node:child_process";

/** A running entry point and what it has printed. */
export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first match of `pattern` in the output (searched from `from`), or fails after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<RegExpExecArray>;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** Starts `node <script>` with `env`. */
export function spawnService(script: string, env: NodeJS.ProcessEnv): ServiceProcess {
  const child = spawn(process.execPath, [script], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    async waitFor(pattern, timeoutMs = 30_000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = pattern.exec(out.slice(from));
        if (m) return m;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${script} exited before printing ${pattern}:\n${out.slice(-3000)}`);
        if (Date.now() > deadline) throw new Error(`${script} did not print ${pattern} within ${timeoutMs} ms:\n${out.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Calls a running service's REST API with `key`; `url()` is read per call (a restart changes the port). Returns the JSON body. */
export function apiClient(url: () => string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${url()}${path}`, {
      method,
      headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.json();
  };
}
