// Named prepared statements for the statements run below the ORM (client.ts, selectRows and
// queryRows): each connection parses and plans such a statement once, then only binds and runs it.
// On a database server sharing its CPUs, parsing and planning the hot reads and creates on every call
// cost as much as the rest of the request (`npm run bench`).
//
// Invariants:
// - Only statements with parameters are named: the rest (DDL, several statements in one string)
//   keep the simple protocol, which the extended one cannot run.
// - At most PREPARED_LIMIT texts are named per process; any text beyond runs unnamed, so a caller
//   building many distinct texts cannot grow every connection's server memory without bound.
// - A named statement whose result a migration changed under it (PostgreSQL's "cached plan must not
//   change result type") runs unnamed from then on: that failure is raised before the statement
//   runs, so running it again is safe, a write included.
import type pg from "pg";

/** Distinct statement texts named per process; each connection that runs one holds its plan. */
export const PREPARED_LIMIT = 200;

/** What PostgreSQL answers when a prepared statement's result type changed (a migration ran meanwhile). */
const PLAN_CHANGED = { code: "0A000", message: "cached plan must not change result type" };

type Rows = Record<string, unknown>[];

/** Runs statements on `pool`, naming (preparing) those with parameters; see the invariants above. */
export function preparedQueries(pool: Pick<pg.Pool, "query">, limit = PREPARED_LIMIT): (sql: string, params: unknown[]) => Promise<Rows> {
  // A text's name, or null once it must run unnamed.
  const names = new Map<string, string | null>();
  return async (sql, params) => {
    let name = names.get(sql);
    if (name === undefined && params.length > 0 && names.size < limit) names.set(sql, (name = `stablegate_${names.size}`));
    if (!name) return (await pool.query<Rows[number]>(sql, params)).rows;
    try {
      return (await pool.query<Rows[number]>({ name, text: sql, values: params })).rows;
    } catch (e) {
      const { code, message } = e as { code?: string; message?: string };
      if (code !== PLAN_CHANGED.code || !message?.includes(PLAN_CHANGED.message)) throw e;
      names.set(sql, null);
      return (await pool.query<Rows[number]>(sql, params)).rows;
    }
  };
}
