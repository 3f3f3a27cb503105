// The embedded database a first start begins from: `npm run build` writes dist/db/template.tar.gz, an
// embedded data directory with every migration applied, so a first `npm start` skips PGlite's initdb
// and the migrations (about 15 s of a first start on a busy machine; loading the dump takes a few).
// Beside it, template.json names what it was made from: the migrations (names and checksums) and
// PGlite's pinned version (a dump is read by the PGlite that wrote it). Invariant: a template is used
// only when both match this release exactly, otherwise the start migrates as before, so a stale or
// foreign template can never give a database a schema its migrations would not.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase } from "./client.js";
import { MIGRATIONS_DIR, migrate, readMigrations } from "./migrate.js";

/** Where the build writes the template: dist/db when built (src/db holds none, so tests from src/ migrate). */
export const TEMPLATE_DIR = dirname(fileURLToPath(import.meta.url));

const DUMP = "template.tar.gz";
const MANIFEST = "template.json";

/** What a template was made from; equal to `templateSource()` when it may be used. */
interface TemplateSource {
  pglite: string;
  migrations: string[];
}

/** This release's migrations and PGlite version, as a template records them. */
function templateSource(migrationsDir: string): TemplateSource {
  const pkg = JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), "../../package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  return {
    pglite: pkg.dependencies["@electric-sql/pglite"] ?? "",
    migrations: readMigrations(migrationsDir).map((m) => `${m.name}:${m.checksum}`),
  };
}

/** Migrates an empty embedded database with the service's own migrator and writes its dump and manifest to `outDir`. */
export async function writeTemplate(outDir = TEMPLATE_DIR, migrationsDir = MIGRATIONS_DIR): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "sg-template-"));
  try {
    const db = await openDatabase({ dataDir: scratch });
    await migrate(db, migrationsDir);
    await db.close();
    const pglite = await PGlite.create(join(scratch, "pglite"));
    const dump = await pglite.dumpDataDir("gzip");
    await pglite.close();
    writeFileSync(join(outDir, DUMP), new Uint8Array(await dump.arrayBuffer()));
    writeFileSync(join(outDir, MANIFEST), `${JSON.stringify(templateSource(migrationsDir), null, 2)}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The template's dump when it was made from exactly this release's migrations and PGlite; null otherwise (none built, stale). */
export function readTemplate(dir = TEMPLATE_DIR, migrationsDir = MIGRATIONS_DIR): Blob | null {
  let made: TemplateSource;
  try {
    made = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as TemplateSource;
  } catch {
    return null;
  }
  if (JSON.stringify(made) !== JSON.stringify(templateSource(migrationsDir))) return null;
  try {
    return new Blob([readFileSync(join(dir, DUMP))]);
  } catch {
    return null;
  }
}
