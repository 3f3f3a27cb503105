// Where the running `npm start` answers. It records its address in DATA_DIR once it listens, so the
// CLI commands that talk to it (devnet pay, listen) find it whatever port it took, without flags.
//
// Invariants:
// - PUBLIC_URL or PORT in the environment wins: the operator said where the service is.
// - A record whose process is gone is ignored (a crashed start leaves it behind).
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config.js";
import { isAlive } from "./db/embedded-lock.js";
import { writeFileAtomic } from "./lib/write-file-atomic.js";

const RECORD = "instance.json";

interface InstanceRecord {
  url: string;
  pid: number;
}

/**
 * The address `npm start` records: PUBLIC_URL when it was given, else where the server listens (PORT
 * alone says nothing of it when 0), an any-address bind (0.0.0.0, [::]) reached at localhost.
 */
export function instanceUrl(config: Pick<Config, "publicUrl" | "publicUrlGiven">, listening: string): string {
  return config.publicUrlGiven ? config.publicUrl : listening.replace(/^http:\/\/(0\.0\.0\.0|\[::\]):/, "http://localhost:");
}

/** Records that this process serves at `url`; returns a function that removes the record (on stop). */
export function recordInstance(dataDir: string, url: string, pid = process.pid): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, RECORD);
  // Written aside then renamed: a CLI command reading it meanwhile finds a whole record or none.
  writeFileAtomic(file, JSON.stringify({ url, pid } satisfies InstanceRecord) + "\n");
  return () => {
    if (readRecord(dataDir)?.pid === pid) rmSync(file, { force: true });
  };
}

/** Which setting chose the running service's address (a merchant's shell may export PORT for an app of theirs). */
export type InstanceSource = "PUBLIC_URL" | "PORT" | "record" | "default";

/** The base URL of the running service: PUBLIC_URL/PORT when set, else what a running `npm start` recorded, else the default. */
export function runningInstanceUrl(config: Pick<Config, "publicUrl" | "publicUrlGiven" | "portGiven" | "dataDir">): string {
  return runningInstance(config).url;
}

/** The running service's base URL and which setting chose it. */
export function runningInstance(config: Pick<Config, "publicUrl" | "publicUrlGiven" | "portGiven" | "dataDir">): { url: string; source: InstanceSource } {
  if (config.publicUrlGiven) return { url: config.publicUrl, source: "PUBLIC_URL" };
  if (config.portGiven) return { url: config.publicUrl, source: "PORT" };
  const record = readRecord(config.dataDir);
  return record && isAlive(record.pid) ? { url: record.url, source: "record" } : { url: config.publicUrl, source: "default" };
}

function readRecord(dataDir: string): InstanceRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, RECORD), "utf8")) as Partial<InstanceRecord>;
    return typeof parsed.url === "string" && Number.isInteger(parsed.pid) ? (parsed as InstanceRecord) : null;
  } catch {
    return null;
  }
}
