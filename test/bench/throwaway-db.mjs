// A throwaway PostgreSQL database for a benchmark run (on DATABASE_URL's server, default the local one).
import { randomBytes } from "node:crypto";
import pg from "pg";

const BASE = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** Creates a database named after `label`; `drop()` removes it even with connections still open. */
export async function throwawayDatabase(label) {
  const name = `sg_bench_${label}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: BASE });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(BASE);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
