// Statements below the ORM are prepared once per connection (src/db/prepared.ts): which are named,
// the bound on names, and a migration changing a prepared statement's result under it. The last
// runs on PostgreSQL when DATABASE_URL names a server (the embedded database does not prepare).
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { preparedQueries } from "../../src/db/prepared.js";

/** A pool stand-in recording what each call asked for. */
function recordingPool(fail?: (config: unknown) => Error | null) {
  const calls: unknown[] = [];
  return {
    calls,
    query: async (config: unknown, values?: unknown[]) => {
      calls.push(values === undefined ? config : { text: config, values });
      const error = fail?.(config);
      if (error) throw error;
      return { rows: [{ ok: 1 }] };
    },
  };
}

describe("preparedQueries", () => {
  it("names a statement with parameters once and reuses the name; one without parameters keeps the simple protocol", async () => {
    const pool = recordingPool();
    const run = preparedQueries(pool as never);
    await run("SELECT $1::int AS a", [1]);
    await run("SELECT $1::int AS a", [2]);
    await run("SELECT $1::int AS b", [3]);
    await run("CREATE TABLE x (a int); CREATE INDEX ON x (a)", []);
    expect(pool.calls).toEqual([
      { name: "stablegate_0", text: "SELECT $1::int AS a", values: [1] },
      { name: "stablegate_0", text: "SELECT $1::int AS a", values: [2] },
      { name: "stablegate_1", text: "SELECT $1::int AS b", values: [3] },
      { text: "CREATE TABLE x (a int); CREATE INDEX ON x (a)", values: [] },
    ]);
  });

  it("names at most `limit` texts; the rest run unnamed", async () => {
    const pool = recordingPool();
    const run = preparedQueries(pool as never, 2);
    for (const n of [1, 2, 3, 1]) await run(`SELECT $1::int AS c${n}`, [n]);
    expect(pool.calls.map((c) => (c as { name?: string }).name ?? null)).toEqual(["stablegate_0", "stablegate_1", null, "stablegate_0"]);
  });

  it("runs a statement whose plan a migration changed unnamed from then on, and passes any other failure on", async () => {
    const changed = Object.assign(new Error("cached plan must not change result type"), { code: "0A000" });
    const pool = recordingPool((c) => (typeof c === "object" && (c as { name?: string }).name ? changed : null));
    const run = preparedQueries(pool as never);
    expect(await run("SELECT $1::int", [1])).toEqual([{ ok: 1 }]);
    await run("SELECT $1::int", [2]);
    expect(pool.calls).toEqual([
      { name: "stablegate_0", text: "SELECT $1::int", values: [1] },
      { text: "SELECT $1::int", values: [1] },
      { text: "SELECT $1::int", values: [2] },
    ]);

    const broken = Object.assign(new Error('relation "nope" does not exist'), { code: "42P01" });
    const failing = preparedQueries(recordingPool(() => broken) as never);
    await expect(failing("SELECT * FROM nope WHERE a = $1", [1])).rejects.toBe(broken);
  });
});

describe.skipIf(!process.env.DATABASE_URL)("preparedQueries on PostgreSQL", () => {
  // One connection, so the statement is prepared where the check looks; a table of a schema of its own.
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  const schema = `prepared_${process.pid}_${Date.now()}`;
  const sql = `SELECT * FROM ${schema}.probe WHERE id = $1`;
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  });

  it("prepares on the connection, and survives a column added under the prepared statement", async () => {
    const run = preparedQueries(pool);
    await pool.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.probe (id int PRIMARY KEY, a text); INSERT INTO ${schema}.probe VALUES (1, 'one')`);
    expect(await run(sql, [1])).toEqual([{ id: 1, a: "one" }]);
    const { rows } = await pool.query("SELECT name FROM pg_prepared_statements WHERE statement = $1", [sql]);
    expect(rows).toEqual([{ name: "stablegate_0" }]);

    // PostgreSQL refuses the prepared statement now ("cached plan must not change result type").
    await pool.query(`ALTER TABLE ${schema}.probe ADD COLUMN b int DEFAULT 7`);
    expect(await run(sql, [1])).toEqual([{ id: 1, a: "one", b: 7 }]);
    expect(await run(sql, [1])).toEqual([{ id: 1, a: "one", b: 7 }]);
  });
});
