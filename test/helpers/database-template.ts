// The project's migrations applied once to an embedded database and dumped into test/.output/, for
// every test file to start its fresh databases from: loading the dump takes a fraction of running
// initdb and every migration again (a second saved per database on an idle machine, several on a busy one). The file's name
// carries a hash of the migrations and of PGlite's version, so a changed migration builds a new one.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase } from "../../src/db/client.js";
import { migrate, readMigrations } from "../../src/db/migrate.js";

const OUTPUT = fileURLToPath(new URL("../.output/", import.meta.url));

let template: Promise<Blob> | undefined;

/** A dump of an embedded database with every committed migration applied (built on first use, then read from disk). */
export function migratedTemplate(): Promise<Blob> {
  return (template ??= loadOrBuild());
}

async function loadOrBuild(): Promise<Blob> {
  const file = join(OUTPUT, `pglite-migrated-${templateKey()}.tar`);
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    mkdirSync(OUTPUT, { recursive: true });
    const dump = await build();
    // Written aside and renamed: a test file starting meanwhile in another worker reads a whole dump or none.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()));
    renameSync(partial, file);
    return dump;
  }
}

/** Migrates a database in a scratch directory with the service's own migrator, then dumps that directory. */
async function build(): Promise<Blob> {
  const dir = mkdtempSync(join(OUTPUT, "template-"));
  try {
    const db = await openDatabase({ dataDir: dir });
    await migrate(db);
    await db.close();
    const pglite = await PGlite.create(join(dir, "pglite"));
    const dump = await pglite.dumpDataDir("none");
    await pglite.close();
    return dump;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function templateKey(): string {
  // The pinned version (a dump is read by the PGlite that wrote it).
  const { dependencies } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { dependencies: Record<string, string> };
  const hash = createHash("sha256").update(dependencies["@electric-sql/pglite"] ?? "");
  for (const m of readMigrations()) hash.update(`${m.name}:${m.checksum}\n`);
  return hash.digest("hex").slice(0, 16);
}
