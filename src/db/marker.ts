// A lost database must not look like a new install. An emptied PostgreSQL volume, a deleted
// DATA_DIR/pglite or a failed restore would otherwise be migrated into a fresh, empty database that
// answers /readyz while every API key fails. So after its first migration each database is recorded
// in a marker file in DATA_DIR, and a start that finds a recorded database empty refuses to go on.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { type Database, type DatabaseOptions, openDatabase, selectRows } from "./client.js";
import { lockDataDir } from "./embedded-lock.js";

/** The marker's file name in DATA_DIR. */
export const MARKER_FILE = "stablegate-database.json";

/** How the marker names the embedded database (DATA_DIR/pglite). */
export const EMBEDDED_DATABASE = "embedded";

/** Raised when the marker cannot be read: it was edited by hand or damaged. */
export class DatabaseMarkerError extends Error {
  override name = "DatabaseMarkerError";
}

/** Raised at start when a database the marker says held Stablegate's data is empty or gone. */
export class LostDatabaseError extends DatabaseMarkerError {
  override name = "LostDatabaseError";
  constructor(
    readonly markerFile: string,
    readonly database: string,
    readonly since: string,
  ) {
    super(
      `The ${database} that ${markerFile} says has held Stablegate's data since ${since} is empty. ` +
        `Nothing was created in it. Restore a backup (.docs/operations.md "Backups and restore"), or delete ${markerFile} to start afresh on purpose.`,
    );
  }
}

/** Which database to open, and the DATA_DIR that holds its marker (null: none, as in tests' in-memory databases). */
export interface DatabaseTarget {
  url: string | undefined;
  dataDir: string | null;
}

interface Marker {
  about: string;
  /** Each database that has held Stablegate's data: embedded, or postgresql://host:port/name (never a user or password). */
  databases: Record<string, { since: string }>;
}

/** One SQL statement's rows: a Database's pool or a bare PGlite. */
export type RunQuery = <R>(sql: string) => Promise<R[]>;

/** When the database was first migrated (ISO 8601), or null when it holds no migrations: empty or new. */
export async function initialisedAt(query: RunQuery): Promise<string | null> {
  const [table] = await query<{ present: boolean }>(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
  if (!table?.present) return null;
  const [first] = await query<{ since: string | null }>(
    `SELECT to_char(min(finished_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS since FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`,
  );
  return first?.since ?? null;
}

/**
 * Opens the target's database, refusing one the marker records that has lost its data. An embedded
 * database whose directory is gone is refused before PGlite would create an empty one in its place.
 */
export async function openGuardedDatabase(target: DatabaseTarget, options: Pick<DatabaseOptions, "poolSize" | "applicationName"> = {}): Promise<Database> {
  if (!target.url && target.dataDir !== null) {
    const dataDir = resolve(target.dataDir);
    const since = readMarker(dataDir)?.databases[EMBEDDED_DATABASE]?.since;
    if (since !== undefined) {
      // Under the lock: a restore moving directories around must not look like a lost database.
      const release = lockDataDir(dataDir);
      try {
        const dbDir = join(dataDir, "pglite");
        if (!existsSync(dbDir) || readdirSync(dbDir).length === 0) throw new LostDatabaseError(markerPath(dataDir), `embedded database in ${dbDir}`, since);
      } finally {
        release();
      }
    }
  }
  const db = await openDatabase({ url: target.url, dataDir: target.dataDir, ...options });
  try {
    await guardAgainstLostDatabase(target, db);
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}

/** Records the target's database in the marker unless it is there already: call it once migrations succeeded. */
export async function recordDatabase(target: DatabaseTarget, db: Database): Promise<void> {
  if (target.dataDir === null) return;
  const dataDir = resolve(target.dataDir);
  const database = await identify(target, db);
  if (readMarker(dataDir)?.databases[database]) return;
  markDatabase(dataDir, database, (await initialisedAt(queryOn(db))) ?? new Date().toISOString());
}

/** Sets `database`'s entry in DATA_DIR's marker (a restore brings the backup's own date). */
export function markDatabase(dataDir: string, database: string, since: string): void {
  const file = markerPath(dataDir);
  const marker: Marker = readMarker(dataDir) ?? {
    about: 'Databases that have held Stablegate\'s data. A start that finds one of them empty refuses to serve; see .docs/operations.md "Backups and restore".',
    databases: {},
  };
  marker.databases[database] = { since };
  // Written aside then renamed: processes starting together never read half a file.
  const partial = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(partial, `${JSON.stringify(marker, null, 2)}\n`);
    renameSync(partial, file);
  } catch (e) {
    rmSync(partial, { force: true });
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new DatabaseMarkerError(`Cannot write ${file} (${code}): DATA_DIR must be writable, with PostgreSQL too, to record which database holds the data.`);
  }
}

async function guardAgainstLostDatabase(target: DatabaseTarget, db: Database): Promise<void> {
  if (target.dataDir === null) return;
  const dataDir = resolve(target.dataDir);
  const marker = readMarker(dataDir);
  if (!marker) return;
  const database = await identify(target, db);
  const since = marker.databases[database]?.since;
  if (since === undefined || (await initialisedAt(queryOn(db))) !== null) return;
  const described = database === EMBEDDED_DATABASE ? `embedded database in ${join(dataDir, "pglite")}` : `PostgreSQL database ${database}`;
  throw new LostDatabaseError(markerPath(dataDir), described, since);
}

/** The marker's name for the database: where it is, never who connects to it. */
async function identify(target: DatabaseTarget, db: Database): Promise<string> {
  if (!target.url) return EMBEDDED_DATABASE;
  const url = new URL(target.url);
  const host = (url.hostname || url.searchParams.get("host") || "localhost").toLowerCase();
  const port = url.port || url.searchParams.get("port") || "5432";
  // The server's own name for it: a URL without one means the user's default database.
  const [row] = await selectRows<{ name: string }>(db.prisma, "SELECT current_database() AS name", []);
  return `postgresql://${host}:${port}/${row?.name ?? ""}`;
}

function queryOn(db: Database): RunQuery {
  return (sql) => selectRows(db.prisma, sql, []);
}

function markerPath(dataDir: string): string {
  return join(dataDir, MARKER_FILE);
}

function readMarker(dataDir: string): Marker | null {
  const file = markerPath(dataDir);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  try {
    const marker = JSON.parse(text) as Marker;
    if (typeof marker.databases !== "object" || marker.databases === null) throw new Error("no databases");
    return marker;
  } catch {
    throw new DatabaseMarkerError(`${file} is damaged (not the JSON Stablegate wrote): restore it from a backup, or delete it to start afresh on purpose.`);
  }
}
