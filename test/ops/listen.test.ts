// `stablegate listen` (its module, and the built command) against a running service: each new
// event of the test key's merchant is forwarded to a local receiver that verifies it with the
// `standardwebhooks` package and the secret `listen` printed; --events filters; a 500 shows as 500; a
// live key is refused; a dropped connection is caught up on without forwarding anything twice.
import { spawn } from "node:child_process";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { FLAGS, type CommandContext, type Flags } from "../../src/cli/command.js";
import { listenCommands } from "../../src/cli/commands/listen.js";
import { listen, type Listener } from "../../src/cli/listen.js";
import { loadConfig } from "../../src/config.js";
import { startApp, type TestApp } from "../helpers/harness.js";
import { subscribed } from "../helpers/live.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  app = await startApp();
  receiver = await startReceiver("/webhooks");
});
/** What a failed test leaves running: its listener (which would forward the next tests' events) and proxy. */
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});
afterAll(async () => {
  await receiver?.close();
  await app?.stop();
});

/** Starts `listen` on `baseUrl` with the test key; `lines` collects what it prints. */
async function startListening(baseUrl: string, types: string[] = []): Promise<{ listener: Listener; lines: string[] }> {
  const lines: string[] = [];
  await subscribed(app.pubsub, 0);
  const listener = await listen({ baseUrl, key: app.testKey, forwardTo: receiver.url, types, print: (l) => lines.push(l), retryWaitMs: () => 100 });
  // The subscription registers right after the socket opens.
  await subscribed(app.pubsub, 1);
  return { listener, lines };
}

async function until(test: () => boolean, what: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Verifies every request the receiver got with `secret`; returns the events they carried. */
function verified(secret: string, from = 0): { id: string; type: string; data: { id: string } }[] {
  const wh = new Webhook(secret);
  return receiver.received.slice(from).map((r) => wh.verify(r.body, r.headers) as { id: string; type: string; data: { id: string } });
}

const newCustomer = async (email: string) => {
  const res = await app.call("POST", "/v1/customers", { body: { email, name: "Listener" } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
};

it("forwards each new event, signed with the printed secret, and prints its status", async () => {
  const { listener, lines } = await startListening(app.url);
  stops.push(listener.stop);
  expect(listener.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const from = receiver.received.length;
  const customer = await newCustomer("forward@example.com");
  const charge = await app.call("POST", "/v1/charges", { body: { orderId: "listen-1", amount: "25.00" } });
  expect(charge.status, charge.text).toBe(201);
  await until(
    () => lines.length >= 2,
    () => lines.join("\n"),
  );
  const events = verified(listener.secret, from);
  expect(events.map((e) => [e.type, e.data.id])).toEqual([
    ["customer.created", customer.id],
    ["charge.pending", charge.body.id],
  ]);
  // The body is the event as GET /v1/events/:id shows it, and its webhook-id is the event's id.
  const { deliveries: _, ...stored } = (await app.call("GET", `/v1/events/${events[0]!.id}`)).body;
  expect(JSON.parse(receiver.received[from]!.body)).toEqual(stored);
  expect(receiver.received[from]!.headers["webhook-id"]).toBe(stored.id);
  expect(receiver.received[from]!.headers["user-agent"]).toBe("Stablegate-Webhooks/1");
  expect(lines[0]).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  customer\\.created +${stored.id}  \\[200\\] POST ${receiver.url}$`));
  expect(lines[1]).toContain(`charge.pending`);
  await listener.stop();
  // Stopped cleanly: `done` resolves.
  await listener.done;
}, 60_000);

it("forwards only the types of --events, and shows a receiver's 500", async () => {
  const { listener, lines } = await startListening(app.url, ["customer.updated"]);
  stops.push(listener.stop);
  receiver.respond((_req, res) => void res.writeHead(500).end("boom"));
  try {
    const from = receiver.received.length;
    const customer = await newCustomer("filtered@example.com");
    expect((await app.call("PATCH", `/v1/customers/${customer.id}`, { body: { name: "Renamed" } })).status).toBe(200);
    await until(
      () => lines.length >= 1,
      () => lines.join("\n"),
    );
    // A second update, forwarded in order: had customer.created been let through, it would have come first.
    expect((await app.call("PATCH", `/v1/customers/${customer.id}`, { body: { name: "Renamed again" } })).status).toBe(200);
    await until(
      () => lines.length >= 2,
      () => lines.join("\n"),
    );
    expect(verified(listener.secret, from).map((e) => e.type)).toEqual(["customer.updated", "customer.updated"]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/customer\.updated +evt_\w+ {2}\[500\] POST /);
  } finally {
    receiver.respond((_req, res) => void res.writeHead(200).end("ok"));
    await listener.stop();
  }
}, 60_000);

it("reconnects after the connection drops and forwards what it missed, none twice", async () => {
  const proxy = await startProxy(new URL(app.url).port);
  const { listener, lines } = await startListening(proxy.url, ["customer.created"]);
  stops.push(listener.stop, proxy.close);
  const from = receiver.received.length;
  const before = await newCustomer("before-drop@example.com");
  await until(
    () => lines.length >= 1,
    () => lines.join("\n"),
  );
  await proxy.down();
  const missed = await newCustomer("while-down@example.com");
  proxy.up();
  await until(
    () => verified(listener.secret, from).length >= 2,
    () => lines.join("\n"),
  );
  const after = await newCustomer("after-drop@example.com");
  await until(
    () => verified(listener.secret, from).length >= 3,
    () => lines.join("\n"),
  );
  // One more, forwarded in order: a duplicate of the first three would have come before it.
  const last = await newCustomer("last@example.com");
  await until(
    () => verified(listener.secret, from).length >= 4,
    () => lines.join("\n"),
  );
  expect(verified(listener.secret, from).map((e) => e.data.id)).toEqual([before.id, missed.id, after.id, last.id]);
  expect(lines.some((l) => l.startsWith("Reconnected"))).toBe(true);
}, 60_000);

it("runs as the built command: prints the secret, forwards, and stops cleanly on Ctrl-C", async () => {
  await subscribed(app.pubsub, 0);
  const child = spawn(process.execPath, ["dist/cli/main.js", "listen", "--forward-to", receiver.url, "--url", app.url], {
    env: { ...process.env, STABLEGATE_API_KEY: app.testKey, DATA_DIR: "", DATABASE_URL: "", REDIS_URL: "" },
  });
  stops.push(async () => void child.kill("SIGKILL"));
  let stdout = "";
  child.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await until(
    () => stdout.includes("Forwarding every test event"),
    () => stdout,
  );
  const secret = /Your webhook signing secret is (whsec_\S+)/.exec(stdout)![1]!;
  await subscribed(app.pubsub, 1);
  const from = receiver.received.length;
  const customer = await newCustomer("child@example.com");
  await until(
    () => stdout.includes("customer.created"),
    () => stdout,
  );
  expect(verified(secret, from).map((e) => [e.type, e.data.id])).toEqual([["customer.created", customer.id]]);
  expect(stdout).toMatch(/customer\.created +evt_\w+ {2}\[200\] POST /);
  child.kill("SIGINT");
  expect(await exited).toBe(0);
}, 60_000);

it("refuses a live key and an unknown event type before connecting", async () => {
  const run = (flags: Partial<Flags>) =>
    listenCommands[0]!.run({
      config: loadConfig({ NODE_ENV: "test", PUBLIC_URL: app.url }),
      flags: { ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, undefined])), ...flags } as Flags,
      args: [],
    } as unknown as CommandContext);
  await expect(run({ "forward-to": receiver.url, "api-key": app.liveKey })).rejects.toThrow(/test-mode events only: use a test key \(sk_test_…\)/);
  await expect(run({ "forward-to": receiver.url, "api-key": app.testKey, events: "customer.created,customer.exploded" })).rejects.toThrow(
    /--events: unknown event type "customer\.exploded"/,
  );
  await expect(run({ "api-key": app.testKey })).rejects.toThrow(/--forward-to is required/);
});

/** A TCP relay to the service on 127.0.0.1 that the test can take down (every connection cut) and bring back on the same port. */
async function startProxy(targetPort: string) {
  const sockets = new Set<Socket>();
  const relay = (client: Socket) => {
    const upstream = createConnection(Number(targetPort));
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  };
  let server: Server = createServer(relay);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return {
    url: `http://127.0.0.1:${port}`,
    down: close,
    up() {
      server = createServer(relay);
      server.listen(port, "127.0.0.1");
    },
    close,
  };
}
