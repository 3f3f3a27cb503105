// `stablegate listen` at its edges, against a fake instance (GET /v1/events and a graphql-ws endpoint
// that acknowledges and streams what the test pushes) mounted under a base path: an event that a
// transaction in flight when the run began commits afterwards, stamped before the run, is forwarded
// while what was visible at the start is not; a failed delivery (a print to a closed pipe) stops none
// after it; the base path is kept; --url, --forward-to and a missing key are refused up front, naming
// the flag.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { FLAGS, type CommandContext, type Flags } from "../../src/cli/command.js";
import { listenCommands } from "../../src/cli/commands/listen.js";
import { listen } from "../../src/cli/listen.js";
import { loadConfig } from "../../src/config.js";
import type { EventResource } from "../../src/domain/events.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";

const BASE_PATH = "/stablegate";
const TEST_KEY = "sk_test_edges";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver("/webhooks");
});
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});
afterAll(async () => {
  await receiver?.close();
});

let serial = 0;
/** A test event stamped `msAgo` before now. */
function event(msAgo: number, type = "customer.created"): EventResource {
  serial++;
  const id = `evt_${String(serial).padStart(6, "0")}`;
  return { id, type, timestamp: new Date(Date.now() - msAgo).toISOString(), livemode: false, data: { id: `cus_${serial}` } };
}

/** A fake instance under BASE_PATH: its events (newest first, as the API pages them), the paths asked for, and a way to stream an event. */
async function fakeInstance() {
  const events: EventResource[] = [];
  const paths: string[] = [];
  const streams: { socket: WebSocket; id: string }[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url!);
    const url = new URL(req.url!, "http://fake");
    if (url.pathname !== `${BASE_PATH}/v1/events` || req.headers["x-api-key"] !== TEST_KEY) {
      return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ message: `No route ${url.pathname}` }));
    }
    const after = url.searchParams.get("startingAfter");
    const start = after ? events.findIndex((e) => e.id === after) + 1 : 0;
    const limit = Number(url.searchParams.get("limit"));
    const data = events.slice(start, start + limit);
    res.writeHead(200, { "content-type": "application/json", date: new Date().toUTCString() });
    res.end(JSON.stringify({ data, hasMore: start + limit < events.length }));
  });
  const sockets = new WebSocketServer({ server, path: `${BASE_PATH}/graphql` });
  sockets.on("connection", (socket) =>
    socket.on("message", (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; id: string };
      if (message.type === "connection_init") socket.send(JSON.stringify({ type: "connection_ack" }));
      if (message.type === "subscribe") streams.push({ socket, id: message.id });
    }),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const close = () =>
    new Promise<void>((r) => {
      for (const s of sockets.clients) s.terminate();
      sockets.close();
      server.closeAllConnections();
      server.close(() => r());
    });
  stops.push(close);
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${BASE_PATH}`,
    paths,
    /** Adds events as committed now, kept newest first. */
    commit(...added: EventResource[]) {
      events.push(...added);
      events.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.id.localeCompare(a.id));
    },
    /** Whether the listener's subscription arrived (it follows the connection's acknowledgement). */
    subscribed: () => streams.length > 0,
    stream(e: EventResource) {
      for (const { socket, id } of streams) socket.send(JSON.stringify({ type: "next", id, payload: { data: { events: e } } }));
    },
  };
}

async function until(test: () => boolean, what: () => string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const forwardedIds = (from: number) => receiver.received.slice(from).map((r) => (JSON.parse(r.body) as { id: string }).id);

it("forwards an event committed after the run began though stamped before it, and nothing visible at the start", async () => {
  const instance = await fakeInstance();
  // Visible at the start, stamped within the catch-up margin: more than one page, none forwarded.
  const before = Array.from({ length: 150 }, (_, i) => event(1_000 + i * 40));
  instance.commit(...before);
  const from = receiver.received.length;
  const lines: string[] = [];
  const listener = await listen({ baseUrl: instance.baseUrl, key: TEST_KEY, forwardTo: receiver.url, types: [], print: (l) => lines.push(l) });
  stops.push(listener.stop);
  // A transaction in flight at the first read: its event is stamped before the run and committed now.
  const inFlight = event(3_000);
  const after = event(0);
  instance.commit(inFlight, after);
  await until(
    () => lines.length >= 2,
    () => lines.join("\n"),
  );
  // One more, streamed once the catch-up is done: anything else the run was to forward would have come before it.
  await until(instance.subscribed, () => "no subscription");
  const fence = event(0);
  instance.stream(fence);
  await until(
    () => lines.some((l) => l.includes(fence.id)),
    () => lines.join("\n"),
  );
  expect(forwardedIds(from)).toEqual([inFlight.id, after.id, fence.id]);
  // Every request kept the base path.
  expect(instance.paths.every((p) => p.startsWith(`${BASE_PATH}/v1/events?limit=100`))).toBe(true);
  expect(instance.paths.some((p) => p.includes(`startingAfter=${before[99]!.id}`))).toBe(true);
});

it("keeps delivering after one delivery fails (a print to a closed pipe)", async () => {
  const instance = await fakeInstance();
  const unhandled = vi.fn();
  process.on("unhandledRejection", unhandled);
  stops.push(async () => void process.off("unhandledRejection", unhandled));
  const lines: string[] = [];
  let prints = 0;
  const print = (line: string) => {
    if (prints++ === 0) throw new Error("write EPIPE");
    lines.push(line);
  };
  const listener = await listen({ baseUrl: instance.baseUrl, key: TEST_KEY, forwardTo: receiver.url, types: [], print });
  stops.push(listener.stop);
  await until(instance.subscribed, () => "no subscription");
  const [first, second] = [event(0), event(0)];
  instance.stream(first);
  instance.stream(second);
  await until(
    () => lines.some((l) => l.includes(second.id)),
    () => lines.join("\n"),
  );
  expect(lines[0]).toBe(`Forwarding customer.created ${first.id} failed: write EPIPE`);
  expect(lines[1]).toMatch(new RegExp(`${second.id} {2}\\[200\\] POST `));
  // Node reports a rejection left unhandled once the microtasks of its turn have run: one turn later.
  await new Promise((r) => setImmediate(r));
  expect(unhandled).not.toHaveBeenCalled();
});

it("refuses a bad --url, plain http off this machine, a bad --forward-to, and no key, naming the flag", async () => {
  vi.stubEnv("STABLEGATE_API_KEY", undefined);
  stops.push(async () => void vi.unstubAllEnvs());
  const run = (flags: Partial<Flags>) =>
    listenCommands[0]!.run({
      config: loadConfig({ NODE_ENV: "test", PUBLIC_URL: "http://127.0.0.1:9" }),
      flags: { ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, undefined])), "forward-to": receiver.url, key: TEST_KEY, ...flags } as Flags,
      args: [],
    } as unknown as CommandContext);
  await expect(run({ url: "localhost:4000" })).rejects.toThrow(
    '--url must be the instance\'s base URL, such as https://pay.example.com or http://localhost:4000 (got "localhost:4000").',
  );
  await expect(run({ url: "http://pay.example.com/stablegate" })).rejects.toThrow(
    /--url: plain http to pay\.example\.com would send your key in clear; use https/,
  );
  await expect(run({ "forward-to": "localhost:3000/webhooks" })).rejects.toThrow(/^--forward-to must be an absolute http\(s\) URL/);
  await expect(run({ "forward-to": "http://me:secret@localhost:3000/webhooks" })).rejects.toThrow(/^--forward-to must not hold credentials/);
  await expect(run({ key: undefined })).rejects.toThrow(/^--api-key or --key \(or STABLEGATE_API_KEY\) is required/);
});

it("says which setting chose the address when the instance cannot be reached", async () => {
  const run = (flags: Partial<Flags>) =>
    listenCommands[0]!.run({
      config: loadConfig({ NODE_ENV: "test", PORT: "9" }),
      flags: { ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, undefined])), "forward-to": receiver.url, key: TEST_KEY, ...flags } as Flags,
      args: [],
    } as unknown as CommandContext);
  await expect(run({})).rejects.toThrow(
    /^Cannot reach the service at http:\/\/localhost:9\/v1\/events\?limit=100 \(.*\); is npm start running\? \(PORT=9 in the environment chose this address/,
  );
  await expect(run({ url: "http://127.0.0.1:9/stablegate/" })).rejects.toThrow(
    /^Cannot reach the service at http:\/\/127\.0\.0\.1:9\/stablegate\/v1\/events.* \(--url chose this address\)$/,
  );
});
