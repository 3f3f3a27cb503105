// Backups of the embedded database (`npm start` on one machine): PGlite's data directory as one
// gzipped tarball, taken and restored while no Stablegate process holds DATA_DIR (its lock says
// so, and nothing changes underneath). PostgreSQL is backed up with its own tools (.docs/operations.md "Backups and restore").
// The local devnet's chain state (DATA_DIR/devnet/state.json) travels in the same tarball, as one
// extra entry beside PGlite's files, so a restored ledger meets the chain it was indexed from. A
// backup without that entry (older, or taken with no devnet) still restores: the devnet then starts
// over and the indexer, seeing its cursor's block gone, follows the new devnet from its head.
// Invariants of a restore: the live database is replaced only by one that was loaded and read in
// full beside it first, so a bad file leaves it exactly as it was; the devnet's state is put back
// only once the database is.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import { writeFileAtomic } from "../lib/write-file-atomic.js";
import { lockDataDir } from "./embedded-lock.js";
import { EMBEDDED_DATABASE, initialisedAt, markDatabase } from "./marker.js";

/** Raised when a restore cannot go ahead; the live database is untouched. */
export class RestoreError extends Error {
  override name = "RestoreError";
}

/** The tar entry that carries the devnet's chain state (PGlite's own entries start with "/"). */
const DEVNET_ENTRY = "stablegate/devnet-state.json";

/** Where the local devnet keeps its chain state (src/chain/devnet.ts, which sits above this floor). */
function devnetStatePath(home: string): string {
  return join(home, "devnet", "state.json");
}

/** What a backup or a restore did. */
export interface BackupResult {
  /** The backup file's size in bytes (a restore reports the file it read). */
  bytes: number;
  /** Whether the devnet's chain state went with the database. */
  devnet: boolean;
}

/** Writes the embedded database in `dataDir`, and the devnet's chain state when there is one, to `out`. */
export async function backupEmbedded(dataDir: string, out: string): Promise<BackupResult> {
  const dbDir = resolve(dataDir, "pglite");
  if (!existsSync(dbDir)) throw new Error(`No embedded database in ${resolve(dataDir)}: nothing to back up.`);
  const release = lockDataDir(resolve(dataDir));
  try {
    const pglite = await PGlite.create(dbDir);
    try {
      const tar = Buffer.from(await (await pglite.dumpDataDir("none")).arrayBuffer());
      const statePath = devnetStatePath(resolve(dataDir));
      const devnet = existsSync(statePath);
      const dump = gzipSync(devnet ? withEntry(tar, DEVNET_ENTRY, readFileSync(statePath)) : tar);
      writeFileSync(out, dump);
      return { bytes: dump.length, devnet };
    } finally {
      await pglite.close();
    }
  } finally {
    release();
  }
}

/**
 * Makes `file` (from backupEmbedded) the embedded database in `dataDir`, and its devnet state the
 * devnet's. An existing database is replaced only with `force`, and only once the file has been
 * loaded beside it, opened and read in full; on any failure the existing one stays as it was.
 */
export async function restoreEmbedded(dataDir: string, file: string, { force = false } = {}): Promise<BackupResult> {
  const home = resolve(dataDir);
  const dbDir = join(home, "pglite");
  const release = lockDataDir(home);
  try {
    const existing = existsSync(dbDir);
    if (existing && readdirSync(dbDir).length > 0 && !force) {
      throw new RestoreError(`${home} already holds a database: move it away first, or pass --force to replace it.`);
    }
    const { tarball, devnetState } = readArchive(file);
    const staging = mkdtempSync(join(home, "pglite.restore-"));
    try {
      const since = await loadAndCheck(staging, tarball, file);
      const aside = existing ? `${dbDir}.old-${randomBytes(6).toString("hex")}` : null;
      if (aside) renameSync(dbDir, aside);
      let swapped = false;
      try {
        renameSync(staging, dbDir);
        swapped = true;
        markDatabase(home, EMBEDDED_DATABASE, since);
      } catch (e) {
        if (swapped) renameSync(dbDir, staging);
        if (aside) renameSync(aside, dbDir);
        throw e;
      }
      if (aside) rmSync(aside, { recursive: true, force: true });
      if (devnetState) {
        // Written beside and renamed over: a crash leaves the old state or the new one, never half.
        mkdirSync(join(home, "devnet"), { recursive: true });
        writeFileAtomic(devnetStatePath(home), devnetState);
      }
      return { bytes: tarball.length, devnet: devnetState !== null };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  } finally {
    release();
  }
}

/**
 * The database's tar inside `file` and the devnet state it carries (null in a backup without one),
 * checked from end to end: a cut or damaged file is refused before PGlite sees it.
 */
function readArchive(file: string): { tarball: Buffer; devnetState: Buffer | null } {
  let gzipped: Buffer;
  try {
    gzipped = readFileSync(file);
  } catch (e) {
    throw new RestoreError(`Cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}).`);
  }
  let tarball: Buffer;
  try {
    // gzip's trailer holds the length and CRC of the whole content: a cut or altered file fails here.
    tarball = gunzipSync(gzipped);
  } catch (e) {
    throw new RestoreError(`${file} is truncated or not a gzip archive (${(e as Error).message}); nothing was changed.`);
  }
  const problem = tarProblem(tarball);
  if (problem) throw new RestoreError(`${file} is not a Stablegate backup: ${problem}; nothing was changed.`);
  return withoutEntry(tarball, DEVNET_ENTRY);
}

const BLOCK = 512;

/** What is wrong with `tar` as the archive of a database directory, or null when nothing is. */
function tarProblem(tar: Buffer): string | null {
  let hasVersion = false;
  let offset = 0;
  for (;;) {
    if (offset + BLOCK > tar.length) return "its archive ends before its end marker (truncated)";
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break;
    const stored = Number.parseInt(field(header, 148, 8), 8);
    // The checksum counts its own eight bytes as spaces.
    const sum = header.reduce((acc, b, i) => acc + (i >= 148 && i < 156 ? 0x20 : b), 0);
    if (stored !== sum) return `its archive is damaged at byte ${offset} (a header's checksum does not match)`;
    const name = field(header, 0, 100);
    if (name === "/PG_VERSION" || name === "PG_VERSION") hasVersion = true;
    const size = Number.parseInt(field(header, 124, 12) || "0", 8);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return hasVersion ? null : "it holds no database directory (no PG_VERSION)";
}

/** `tar` with one more file, `name` holding `content`, before its end marker. */
function withEntry(tar: Buffer, name: string, content: Buffer): Buffer {
  const end = endOf(tar);
  const header = Buffer.alloc(BLOCK);
  header.write(name, 0, 100, "latin1");
  header.write("0000644\0", 100, "latin1");
  header.write("0000000\0", 108, "latin1");
  header.write("0000000\0", 116, "latin1");
  header.write(`${content.length.toString(8).padStart(11, "0")}\0`, 124, "latin1");
  header.write(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, "0")}\0`,
    136,
    "latin1",
  );
  header.write("0", 156, "latin1");
  header.write("ustar\0", 257, "latin1");
  header.write("00", 263, "latin1");
  const sum = header.reduce((acc, b, i) => acc + (i >= 148 && i < 156 ? 0x20 : b), 0);
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  const padded = Buffer.alloc(Math.ceil(content.length / BLOCK) * BLOCK);
  content.copy(padded);
  return Buffer.concat([tar.subarray(0, end), header, padded, Buffer.alloc(2 * BLOCK)]);
}

/** `tar` (already checked by tarProblem) without the file `name`, and that file's content (null when absent). */
function withoutEntry(tar: Buffer, name: string): { tarball: Buffer; devnetState: Buffer | null } {
  for (let offset = 0; ;) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) return { tarball: tar, devnetState: null };
    const size = Number.parseInt(field(header, 124, 12) || "0", 8);
    const next = offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (field(header, 0, 100) === name) {
      return {
        tarball: Buffer.concat([tar.subarray(0, offset), tar.subarray(next)]),
        devnetState: Buffer.from(tar.subarray(offset + BLOCK, offset + BLOCK + size)),
      };
    }
    offset = next;
  }
}

/** Where `tar`'s end marker starts. */
function endOf(tar: Buffer): number {
  let offset = 0;
  while (offset + BLOCK <= tar.length && !tar.subarray(offset, offset + BLOCK).every((b) => b === 0)) {
    offset += BLOCK + Math.ceil(Number.parseInt(field(tar.subarray(offset, offset + BLOCK), 124, 12) || "0", 8) / BLOCK) * BLOCK;
  }
  return offset;
}

function field(header: Buffer, start: number, length: number): string {
  return header
    .subarray(start, start + length)
    .toString("latin1")
    .replace(/\0.*$/s, "")
    .trim();
}

/**
 * Loads `tarball` into `dir`, opens it and reads every table in full, which fails on any missing or
 * damaged data file; returns when the database was first migrated.
 */
async function loadAndCheck(dir: string, tarball: Buffer, file: string): Promise<string> {
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir, { loadDataDir: new Blob([new Uint8Array(tarball)]) });
  } catch (e) {
    throw new RestoreError(`${file} holds a database that does not open (${(e as Error).message}); nothing was changed.`);
  }
  try {
    const since = await initialisedAt(async <R>(sql: string) => (await pglite.query<R>(sql)).rows);
    if (since === null) throw new RestoreError(`${file} is not a Stablegate backup (no migrations table in it); nothing was changed.`);
    const tables = await pglite.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`);
    for (const { name } of tables.rows) {
      try {
        // Each row as text: a sequential scan that also reads every value stored out of line.
        await pglite.query(`SELECT count(*), sum(length(t::text)) FROM "public"."${name.replaceAll('"', '""')}" t`);
      } catch (e) {
        throw new RestoreError(`${file} holds a damaged database: table ${name} cannot be read (${(e as Error).message}); nothing was changed.`);
      }
    }
    return since;
  } catch (e) {
    throw e instanceof RestoreError ? e : new RestoreError(`${file} holds a damaged database (${(e as Error).message}); nothing was changed.`);
  } finally {
    await pglite.close();
  }
}
