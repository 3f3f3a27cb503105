// A lost database must not look like a new install. An emptied PostgreSQL volume, a deleted
// DATA_DIR/pglite or a failed restore would otherwise be migrated into a fresh, empty database that
// answers /readyz while every API key fails. So after its first migration each database is recorded
// in a marker file in DATA_DIR, and a start that finds a recorded database empty refuses to go on.
// A PostgreSQL database is known by what it is, not by how a URL spells its host: its server's system
// identifier and its own name and OID. A database dropped and created again (same server, same name,
// a new OID) is the recorded one emptied, whatever host the URL names. A wiped volume makes a new
// server (a new system identifier), so the addresses that reached a database (host as written and
// as resolved, port, name) are recorded too: the same address with nothing in it is the same loss.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../lib/write-file-atomic.js";
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

/** What the marker keeps of one PostgreSQL database: what it is, and where it was reached (never a user or password). */
export interface PostgresIdentity {
  /** The server's system identifier (pg_control_system()), or null when the server does not tell it. */
  system: string | null;
  /** The database's OID on that server. */
  oid: string;
  name: string;
  /** host:port/name as written in URLs that reached it, and with the host's resolved addresses. */
  addresses: string[];
}

/** One database's marker entry: since when it held data, and for PostgreSQL what it is. */
type MarkerEntry = { since: string } & Partial<PostgresIdentity>;

interface Marker {
  about: string;
  /**
   * Each database that has held Stablegate's data: embedded, postgresql:<system>/<oid> with its
   * identity, or (written by 0.2 and earlier) postgresql://host:port/name.
   */
  databases: Record<string, MarkerEntry>;
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
export async function openGuardedDatabase(
  target: DatabaseTarget,
  options: Pick<DatabaseOptions, "poolSize" | "applicationName" | "template" | "onTemplateFailed"> = {},
): Promise<Database> {
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
  if (!target.url) {
    if (!readMarker(dataDir)?.databases[EMBEDDED_DATABASE])
      markDatabase(dataDir, EMBEDDED_DATABASE, (await initialisedAt(queryOn(db))) ?? new Date().toISOString());
    return;
  }
  const identity = await identifyPostgres(target.url, db);
  const key = postgresKey(identity);
  const known = readMarker(dataDir)?.databases[key];
  const addresses = [...new Set([...(known?.addresses ?? []), ...identity.addresses])];
  if (known && addresses.length === known.addresses?.length) return;
  markDatabase(dataDir, key, known?.since ?? (await initialisedAt(queryOn(db))) ?? new Date().toISOString(), { ...identity, addresses });
}

/** Sets `database`'s entry in DATA_DIR's marker (a restore brings the backup's own date). */
export function markDatabase(dataDir: string, database: string, since: string, identity?: PostgresIdentity): void {
  const file = markerPath(dataDir);
  const marker: Marker = readMarker(dataDir) ?? {
    about: 'Databases that have held Stablegate\'s data. A start that finds one of them empty refuses to serve; see .docs/operations.md "Backups and restore".',
    databases: {},
  };
  marker.databases[database] = { since, ...identity };
  // Written aside then renamed: processes starting together never read half a file.
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileAtomic(file, `${JSON.stringify(marker, null, 2)}\n`);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new DatabaseMarkerError(`Cannot write ${file} (${code}): DATA_DIR must be writable, with PostgreSQL too, to record which database holds the data.`);
  }
}

async function guardAgainstLostDatabase(target: DatabaseTarget, db: Database): Promise<void> {
  if (target.dataDir === null) return;
  const dataDir = resolve(target.dataDir);
  const marker = readMarker(dataDir);
  if (!marker) return;
  if (!target.url) {
    const since = marker.databases[EMBEDDED_DATABASE]?.since;
    if (since === undefined || (await initialisedAt(queryOn(db))) !== null) return;
    throw new LostDatabaseError(markerPath(dataDir), `embedded database in ${join(dataDir, "pglite")}`, since);
  }
  if ((await initialisedAt(queryOn(db))) !== null) return;
  const identity = await identifyPostgres(target.url, db);
  const recorded = Object.entries(marker.databases).find(([key, entry]) => isSameDatabase(identity, key, entry));
  if (!recorded) return;
  const server = identity.system === null ? "" : ` on server ${identity.system}`;
  throw new LostDatabaseError(markerPath(dataDir), `PostgreSQL database ${identity.name}${server} (at ${identity.addresses[0]})`, recorded[1].since);
}

/**
 * Whether the empty database `now` stands where the recorded one did: the same database (server and
 * OID), one of the same name on the same server (dropped and created again), or one at an address
 * that reached the recorded one (a wiped volume is a new server at the old address).
 */
function isSameDatabase(now: PostgresIdentity, key: string, entry: MarkerEntry): boolean {
  if (key === EMBEDDED_DATABASE) return false;
  const legacy = key.startsWith("postgresql://") ? [unbracket(key.slice("postgresql://".length))] : [];
  if (now.system !== null && entry.system === now.system && (entry.oid === now.oid || entry.name === now.name)) return true;
  return [...legacy, ...(entry.addresses ?? [])].some((address) => now.addresses.includes(address));
}

/** The marker's key for a PostgreSQL database: what it is, or where it is when the server hides its identifier. */
function postgresKey(identity: PostgresIdentity): string {
  return identity.system === null ? `postgresql://${identity.addresses[0]}` : `postgresql:${identity.system}/${identity.oid}`;
}

/** The database `url` reached: its server's identifier and its OID, asked of the server itself, and its addresses. */
async function identifyPostgres(url: string, db: Database): Promise<PostgresIdentity> {
  const [row] = await selectRows<{ oid: string; name: string }>(
    db.prisma,
    "SELECT oid::text AS oid, datname AS name FROM pg_database WHERE datname = current_database()",
    [],
  );
  const { host, port } = addressOf(url);
  const addresses = [host, ...(await resolveHost(host))].map((h) => `${h}:${port}/${row!.name}`);
  return { system: await systemIdentifier(db), oid: row!.oid, name: row!.name, addresses: [...new Set(addresses)] };
}

/** The server's system identifier, or null from a server that revokes pg_control_system() (still guarded by address). */
async function systemIdentifier(db: Database): Promise<string | null> {
  try {
    const [row] = await selectRows<{ system: string }>(db.prisma, "SELECT system_identifier::text AS system FROM pg_control_system()", []);
    return row?.system ?? null;
  } catch {
    return null;
  }
}

/** The host a URL names (lower case, IPv6 without brackets) and its port. */
function addressOf(url: string): { host: string; port: string } {
  const parsed = new URL(url);
  // As the driver does: a host parameter (a socket directory, say) wins over the URL's host.
  const host = (parsed.searchParams.get("host") || parsed.hostname || "localhost").toLowerCase();
  return { host: unbracket(host), port: parsed.port || parsed.searchParams.get("port") || "5432" };
}

function unbracket(host: string): string {
  return host.replace(/^\[(.*)\]/, "$1");
}

/** A host name's addresses (none for a socket directory or a name that does not resolve): localhost is 127.0.0.1 too. */
async function resolveHost(host: string): Promise<string[]> {
  if (host.startsWith("/") || isIP(host)) return [];
  try {
    return (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return [];
  }
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
