// The raw baseline of the live benchmark: node:http + ws + pg, no GraphQL, no pub/sub. A socket
// picks a topic with its first message; POST /change/<topic> writes a row, then sends every socket
// of that topic a small JSON message. Reports its port to the parent.
import { createServer } from "node:http";
import pg from "pg";
import { WebSocketServer } from "ws";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query("CREATE TABLE IF NOT EXISTS bench_live (topic text PRIMARY KEY, n int NOT NULL)");
const topics = new Map();
const server = createServer(async (req, res) => {
  const topic = req.url.split("/")[2];
  const { rows } = await pool.query("INSERT INTO bench_live (topic, n) VALUES ($1, 1) ON CONFLICT (topic) DO UPDATE SET n = bench_live.n + 1 RETURNING n", [
    topic,
  ]);
  const message = JSON.stringify({ topic, status: "CANCELLED", n: rows[0].n, committedAt: Date.now() });
  for (const socket of topics.get(topic) ?? []) socket.send(message);
  res.writeHead(200).end("{}");
});
const wss = new WebSocketServer({ server });
wss.on("connection", (socket) => {
  socket.once("message", (data) => {
    const topic = String(data);
    if (!topics.has(topic)) topics.set(topic, new Set());
    topics.get(topic).add(socket);
    socket.on("close", () => topics.get(topic).delete(socket));
    socket.send(JSON.stringify({ topic, status: "PENDING" }));
  });
});
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
