// Backups of the embedded database (`npm start` on one machine): PGlite's data directory as one
// gzipped tarball, taken and restored while no Stablegate process holds DATA_DIR (its lock says
// so, and nothing changes underneath). PostgreSQL is backed up with its own tools (README "Deploy").
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { lockDataDir } from "./embedded-lock.js";

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
 * replaced only with `force`; the restored one must open and hold Stablegate's tables.
 */
export async function restoreEmbedded(dataDir: string, file: string, { force = false } = {}): Promise<void> {
  const dump = readFileSync(file);
  const dbDir = resolve(dataDir, "pglite");
  const release = lockDataDir(resolve(dataDir));
  try {
    if (existsSync(dbDir) && readdirSync(dbDir).length > 0) {
      if (!force) throw new Error(`${resolve(dataDir)} already holds a database: move it away first, or pass --force to replace it.`);
      rmSync(dbDir, { recursive: true, force: true });
    }
    const pglite = await PGlite.create(dbDir, { loadDataDir: new Blob([dump]) });
    try {
      await pglite.query(`SELECT count(*) FROM "_prisma_migrations"`);
    } catch {
      throw new Error(`${file} is not a Stablegate backup (no migrations table in it).`);
    } finally {
      await pglite.close();
    }
  } finally {
    release();
  }
}
