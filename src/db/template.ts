// The embedded database a first start begins from: `npm run build` writes dist/db/template.tar.gz, an
// embedded data directory with every migration applied, so a first `npm start` skips PGlite's initdb
// and the migrations (about 15 s of a first start on a busy machine; loading the dump takes a few).
// Beside it, template.json names what it was made from: the migrations (names and checksums), the
// migrator's format, the installed PGlite's version (a dump is read by the PGlite that wrote it), and
// the dump's sha256. Invariants: a template is used only when all of them match this release and the
// dump on disk exactly, otherwise the start migrates as before, so a stale, foreign or cut template can
// never give a database a schema its migrations would not; each file is written aside and renamed, the
// dump first and the manifest last, so an interrupted build leaves no manifest that vouches for it.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { writeFileAtomic } from "../lib/write-file-atomic.js";
import { openDatabase } from "./client.js";
import { MIGRATIONS_DIR, MIGRATOR_FORMAT, migrate, readMigrations } from "./migrate.js";

/** Where the build writes the template: dist/db when built (src/db holds none, so tests from src/ migrate). */
export const TEMPLATE_DIR = dirname(fileURLToPath(import.meta.url));

const DUMP = "template.tar.gz";
const MANIFEST = "template.json";

/** What a template was made from; equal to `templateSource()` when it may be used. */
interface TemplateSource {
  pglite: string;
  migrator: number;
  migrations: string[];
}

/** A template's manifest: its source and its dump's sha256. */
interface Manifest extends TemplateSource {
  sha256: string;
}

/** The version of the PGlite installed (not the one package.json asks for: a range, or a stale install). */
export function pgliteVersion(): string {
  // Its package.json is not among the package's exports: found from its entry point, two levels up.
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const pkg = JSON.parse(readFileSync(resolve(dirname(entry), "..", "package.json"), "utf8")) as { name?: string; version?: string };
  if (pkg.name !== "@electric-sql/pglite" || !pkg.version) throw new Error(`Cannot tell the installed PGlite's version from ${entry}`);
  return pkg.version;
}

/** This release's migrations, migrator and PGlite, as a template records them. */
function templateSource(migrationsDir: string): TemplateSource {
  return {
    pglite: pgliteVersion(),
    migrator: MIGRATOR_FORMAT,
    migrations: readMigrations(migrationsDir).map((m) => `${m.name}:${m.checksum}`),
  };
}

const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

/** Migrates an empty embedded database with the service's own migrator and writes its dump and manifest to `outDir`. */
export async function writeTemplate(outDir = TEMPLATE_DIR, migrationsDir = MIGRATIONS_DIR): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "sg-template-"));
  try {
    const db = await openDatabase({ dataDir: scratch });
    await migrate(db, migrationsDir);
    await db.close();
    const pglite = await PGlite.create(join(scratch, "pglite"));
    const dump = new Uint8Array(await (await pglite.dumpDataDir("gzip")).arrayBuffer());
    await pglite.close();
    writeFileAtomic(join(outDir, DUMP), dump);
    const manifest: Manifest = { ...templateSource(migrationsDir), sha256: sha256(dump) };
    writeFileAtomic(join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The template's dump when it was made from exactly this release's migrations, migrator and PGlite and is whole; null otherwise (none built, stale, cut). */
export function readTemplate(dir = TEMPLATE_DIR, migrationsDir = MIGRATIONS_DIR): Blob | null {
  let dump: Buffer;
  let made: Partial<Manifest>;
  try {
    made = JSON.parse(readFileSync(join(dir, MANIFEST), "utf8")) as Partial<Manifest>;
    dump = readFileSync(join(dir, DUMP));
  } catch {
    return null;
  }
  const { sha256: expected, ...source } = made;
  if (JSON.stringify(source) !== JSON.stringify(templateSource(migrationsDir))) return null;
  return expected === sha256(dump) ? new Blob([new Uint8Array(dump)]) : null;
}
