// Fails CI when PostgreSQL or Redis cannot be reached: the second test run must never be skipped.
import { Redis } from "ioredis";
import pg from "pg";

const [pgUrl, redisUrl] = process.argv.slice(2);
const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 5000 });
await client.connect();
const { rows } = await client.query("SHOW server_version");
await client.end();
const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
await redis.connect();
const pong = await redis.ping();
redis.disconnect();
if (pong !== "PONG") throw new Error(`Redis answered ${pong}`);
console.log(`PostgreSQL ${rows[0].server_version} and Redis reachable`);
