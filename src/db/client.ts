// Opens the database: embedded PGlite by default, PostgreSQL when a URL is given. Everything above
// this module sees the same Prisma client and the same SQL, whichever engine is underneath.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { type Prisma as P, PrismaClient } from "../generated/prisma/client.js";
import { lockDataDir } from "./embedded-lock.js";
import { preparedQueries } from "./prepared.js";

export type Prisma = PrismaClient;

/** Raw SQL access below Prisma, for migrations and multi-statement scripts. */
export interface SqlRunner {
  /** Runs a script of one or more statements on one connection, under a session advisory lock. */
  withLock<T>(lockKey: number, fn: (conn: SqlConnection) => Promise<T>): Promise<T>;
  /**
   * Takes a session advisory lock if no one holds it, on a connection kept for as long as the lock
   * is held; null when another session holds it. If this process dies, its connection closes and
   * the lock passes to the next process that asks (failover).
   */
  tryLock(lockKey: number): Promise<HeldLock | null>;
}

/** A held session lock. */
export interface HeldLock {
  /** False once the lock's connection is gone: the server has released the lock, stop acting on it. */
  alive(): Promise<boolean>;
  release(): Promise<void>;
}

/** One connection: `exec` takes multi-statement scripts, `query` one parameterised statement. */
export interface SqlConnection {
  exec(script: string): Promise<void>;
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
}

/** One parameterised statement (a read, or a write that commits on its own) on a pool below Prisma, answering rows as the driver parses them. */
type RawQuery = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** The pool beneath each client this module opened. */
const rawQueries = new WeakMap<object, RawQuery>();

/**
 * Runs one read-only statement on the connection pool beneath `prisma`, without the ORM and
 * prepared once per connection (prepared.ts): for the hottest reads, where Prisma's per-call cost
 * was 40% of the request's CPU (`npm run bench`). A
 * client this module did not open goes through Prisma; rows are the same either way as long as
 * int8 and numeric columns are selected as text (the drivers parse those differently).
 */
export async function selectRows<R>(prisma: Prisma, sql: string, params: unknown[]): Promise<R[]> {
  const raw = rawQueries.get(prisma);
  if (raw) return (await raw(sql, params)) as R[];
  return prisma.$queryRawUnsafe<R[]>(sql, ...params);
}

/**
 * Runs one statement, a write too (it commits on its own), on the pool beneath `db` without the ORM,
 * when `db` is a client this module opened: the hot creates' single round trips. Inside a transaction,
 * or on any other client, it goes through Prisma. As for selectRows, rows are the same either way as
 * long as int8 and numeric columns are selected as text.
 */
export async function queryRows<R>(db: Prisma | P.TransactionClient, query: P.Sql): Promise<R[]> {
  const raw = rawQueries.get(db);
  if (raw) return (await raw(query.text, query.values)) as R[];
  return db.$queryRaw<R[]>(query);
}

/** Registers the pool beneath `prisma`, reporting each statement as Prisma's own are. */
function registerRawQueries(prisma: PrismaClient, run: RawQuery, onQuery?: (sql: string) => void): void {
  rawQueries.set(prisma, onQuery ? (sql, params) => (onQuery(sql), run(sql, params)) : run);
}

/** An open database. */
export interface Database {
  readonly prisma: PrismaClient;
  readonly kind: "embedded" | "postgres";
  readonly sql: SqlRunner;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * The connection pool now; null on the embedded database, which is one connection inside this
   * process with its own queue that it does not expose (no pool to size, no waiters to count).
   */
  poolStats(): PoolStats | null;
  close(): Promise<void>;
}

/** A PostgreSQL connection pool: connections open (`size`, of at most `max`), idle, and requests waiting for one. */
export interface PoolStats {
  size: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface DatabaseOptions {
  /** PostgreSQL URL; when absent the embedded database is used. */
  url?: string | undefined;
  /** Embedded database directory; `null` keeps it in memory (tests). */
  dataDir?: string | null;
  /** In memory only: starts from this dumped data directory (PGlite's `dumpDataDir`) instead of an empty database. */
  loadDataDir?: Blob;
  /** On disk only: the dumped data directory to begin from when the directory holds no database yet (a first start); null: initdb. */
  template?: () => Blob | null;
  /** Called when the template fails to load: the database then begins empty (initdb), for the migrations to fill. */
  onTemplateFailed?: (error: Error) => void;
  poolSize?: number;
  /** PostgreSQL's application_name for this pool's connections: pg_stat_activity and server logs name the process. */
  applicationName?: string;
  /** Called with each SQL statement Prisma sends (query counting in tests). */
  onQuery?: (sql: string) => void;
}

/** Opens the configured database. Call `migrate()` before serving. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options) : openEmbedded(options);
}

type AdapterFactory = NonNullable<ConstructorParameters<typeof PrismaClient>[0]["adapter"]>;

type TransactionOptions = NonNullable<ConstructorParameters<typeof PrismaClient>[0]["transactionOptions"]>;

/**
 * The embedded database has one connection, and PGlite queues every transaction behind the one
 * running: waiting one's turn is normal there, not a sign of trouble. Prisma's defaults (2 s to
 * start, 5 s to finish) would fail a settlement or an API write that merely queued behind a busy
 * worker in the same process, so the embedded client waits longer. PostgreSQL keeps the defaults:
 * there a long wait means the pool is exhausted, and failing fast sheds the load.
 */
const EMBEDDED_TRANSACTIONS: TransactionOptions = { maxWait: 15_000, timeout: 20_000 };

function createClient(adapter: AdapterFactory, onQuery?: (sql: string) => void, transactionOptions?: TransactionOptions): PrismaClient {
  if (!onQuery) return new PrismaClient({ adapter, ...(transactionOptions && { transactionOptions }) });
  const client = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }], ...(transactionOptions && { transactionOptions }) });
  client.$on("query", (e) => onQuery(e.query));
  return client as unknown as PrismaClient;
}

/** Raised when DATABASE_URL's server cannot be reached or refuses the connection: its message names the variable and the cause. */
export class DatabaseConnectionError extends Error {
  override name = "DatabaseConnectionError";
}

/** One line for an operator: which variable, which server and database (never who or with what password), and why. */
function connectionProblem(url: string, e: unknown): DatabaseConnectionError {
  const parsed = new URL(url);
  const host = parsed.searchParams.get("host") || parsed.hostname || "localhost";
  const where = `${host}:${parsed.searchParams.get("port") || parsed.port || 5432}${parsed.pathname}`;
  const { message, code } = e as { message?: string; code?: string };
  const cause = message?.split("\n")[0] ?? String(e);
  return new DatabaseConnectionError(
    `Cannot connect to the PostgreSQL database in DATABASE_URL (${where}): ${cause}${code && !cause.includes(code) ? ` (${code})` : ""}`,
  );
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<Database> {
  const max = options.poolSize ?? 10;
  const pool = new pg.Pool({ connectionString: url, max, application_name: options.applicationName });
  // An idle client that loses its server must not take the process down.
  pool.on("error", () => {});
  // One connection up front, so an unreachable or refusing server is reported as such, not as the
  // stack of whichever query happened to come first.
  try {
    (await pool.connect()).release();
  } catch (e) {
    await pool.end().catch(() => {});
    throw connectionProblem(url, e);
  }
  const prisma = createClient(new PrismaPg(pool), options.onQuery);
  registerRawQueries(prisma, preparedQueries(pool), options.onQuery);
  return {
    prisma,
    kind: "postgres",
    sql: {
      async tryLock(lockKey) {
        const client = await pool.connect();
        let locked = false;
        try {
          locked = (await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [lockKey])).rows[0]?.locked === true;
        } finally {
          // Only a held lock keeps its connection.
          if (!locked) client.release();
        }
        if (!locked) return null;
        // A checked-out client that loses its server emits "error"; alive() reports it instead.
        client.on("error", () => {});
        // A lost connection goes back to the pool destroyed, once: a client never returned would hold the pool's end forever.
        let returned = false;
        const giveBack = (err?: Error) => {
          if (!returned) client.release(err ?? false);
          returned = true;
        };
        return {
          alive: () =>
            client.query("SELECT 1").then(
              () => true,
              (err: Error) => (giveBack(err), false),
            ),
          async release() {
            if (returned) return;
            giveBack(
              await client.query("SELECT pg_advisory_unlock($1)", [lockKey]).then(
                () => undefined,
                (err: Error) => err,
              ),
            );
          },
        };
      },
      async withLock(lockKey, fn) {
        const client = await pool.connect();
        try {
          await client.query("SELECT pg_advisory_lock($1)", [lockKey]);
          try {
            return await fn({
              exec: async (script) => void (await client.query(script)),
              query: async (sql, params) => (await client.query(sql, params)).rows,
            });
          } finally {
            await client.query("SELECT pg_advisory_unlock($1)", [lockKey]);
          }
        } finally {
          client.release();
        }
      },
    },
    ping: async () => void (await pool.query("SELECT 1")),
    poolStats: () => ({ size: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/** Where a first start loads the template, beside pglite/, before renaming it into place. */
const TEMPLATE_STAGING = "pglite.template-";

/**
 * Opens (or creates) the embedded database in `home`/pglite, which the caller has locked. A missing or
 * empty directory begins from the template when there is one. Invariant: nothing here deletes or
 * writes into a pglite/ that holds files (a database restored or copied in, even after a start died
 * loading the template): the template is loaded beside it and renamed into place only once whole.
 */
async function openEmbeddedDir(home: string, options: DatabaseOptions): Promise<PGlite> {
  const dbDir = join(home, "pglite");
  // A start that died loading the template left its staging directory, which held the template alone.
  for (const name of readdirSync(home)) {
    if (name.startsWith(TEMPLATE_STAGING)) rmSync(join(home, name), { recursive: true, force: true });
  }
  const empty = !existsSync(dbDir) || readdirSync(dbDir).length === 0;
  const template = empty ? (options.template?.() ?? null) : null;
  if (template) {
    const staging = mkdtempSync(join(home, TEMPLATE_STAGING));
    try {
      await (await PGlite.create(staging, { loadDataDir: template })).close();
      // rmdir removes only an empty directory: files put there meanwhile stay, and the rename then fails.
      if (existsSync(dbDir)) rmdirSync(dbDir);
      renameSync(staging, dbDir);
    } catch (e) {
      // A template that does not load costs the first start its speed, never the start itself.
      rmSync(staging, { recursive: true, force: true });
      options.onTemplateFailed?.(e as Error);
    }
  }
  mkdirSync(dbDir, { recursive: true });
  return PGlite.create(dbDir);
}

async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  const dir = options.dataDir === undefined ? "./.data" : options.dataDir;
  let release = () => {};
  let pglite: PGlite;
  if (dir === null) {
    pglite = await PGlite.create(options.loadDataDir && { loadDataDir: options.loadDataDir });
  } else {
    const home = resolve(dir);
    release = lockDataDir(home);
    try {
      pglite = await openEmbeddedDir(home, options);
    } catch (e) {
      release();
      throw e;
    }
  }
  const prisma = createClient(new PrismaPGlite(pglite), options.onQuery, EMBEDDED_TRANSACTIONS);
  registerRawQueries(prisma, async (sql, params) => (await pglite.query<Record<string, unknown>>(sql, params)).rows, options.onQuery);
  const conn: SqlConnection = {
    exec: async (script) => void (await pglite.exec(script)),
    query: async <R>(sql: string, params?: unknown[]) => (await pglite.query<R>(sql, params)).rows,
  };
  return {
    prisma,
    kind: "embedded",
    // One process, one connection: nothing else can race, so the lock is a no-op.
    sql: { withLock: (_key, fn) => fn(conn), tryLock: async () => ({ alive: async () => true, release: async () => {} }) },
    ping: async () => void (await pglite.query("SELECT 1")),
    poolStats: () => null,
    async close() {
      await prisma.$disconnect();
      await pglite.close();
      release();
    },
  };
}
