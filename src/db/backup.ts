// Backups of the embedded database (`npm start` on one machine): PGlite's data directory as one
// gzipped tarball, taken and restored while no Stablegate process holds DATA_DIR (its lock says
// so, and nothing changes underneath). PostgreSQL is backed up with its own tools (.docs/operations.md "Backups and restore").
// Invariant of a restore: the live database is replaced only by one that was loaded and read in
// full beside it first, so a bad file leaves it exactly as it was.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { PGlite } from "@electric-sql/pglite";
import { lockDataDir } from "./embedded-lock.js";
import { EMBEDDED_DATABASE, initialisedAt, markDatabase } from "./marker.js";

/** Raised when a restore cannot go ahead; the live database is untouched. */
export class RestoreError extends Error {
  override name = "RestoreError";
}

/** Writes the embedded database in `dataDir` to `out`; returns its size in bytes. */
export async function backupEmbedded(dataDir: string, out: string): Promise<number> {
  const dbDir = resolve(dataDir, "pglite");
  if (!existsSync(dbDir)) throw new Error(`No embedded database in ${resolve(dataDir)}: nothing to back up.`);
  const release = lockDataDir(resolve(dataDir));
  try {
    const pglite = await PGlite.create(dbDir);
    try {
      const dump = Buffer.from(await (await pglite.dumpDataDir("gzip")).arrayBuffer());
      writeFileSync(out, dump);
      return dump.length;
    } finally {
      await pglite.close();
    }
  } finally {
    release();
  }
}

/**
 * Makes `file` (from backupEmbedded) the embedded database in `dataDir`. An existing database is
 * replaced only with `force`, and only once the file has been loaded beside it, opened and read in
 * full; on any failure the existing one stays as it was.
 */
export async function restoreEmbedded(dataDir: string, file: string, { force = false } = {}): Promise<void> {
  const home = resolve(dataDir);
  const dbDir = join(home, "pglite");
  const release = lockDataDir(home);
  try {
    const existing = existsSync(dbDir);
    if (existing && readdirSync(dbDir).length > 0 && !force) {
      throw new RestoreError(`${home} already holds a database: move it away first, or pass --force to replace it.`);
    }
    const tarball = readArchive(file);
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
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  } finally {
    release();
  }
}

/** The tar inside `file`, checked from end to end: a cut or damaged file is refused before PGlite sees it. */
function readArchive(file: string): Buffer {
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
  return tarball;
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
