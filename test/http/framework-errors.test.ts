// Errors raised by Fastify and Node before any route runs (routing, body parsing, HTTP parsing,
// shutdown) answer in the same flat body as every other error, with the X-Request-Id header.
import net from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/client.js";
import { createServer } from "../../src/http/server.js";
import type { PubSub } from "../../src/realtime/pubsub.js";
import { expectError, startApp, type TestApp } from "../helpers/harness.js";
import { until } from "../helpers/wait.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

interface RawResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** Writes `request` as is on a new connection and parses every response until the server closes it. */
async function raw(baseUrl: string, request: string | ((socket: net.Socket) => Promise<void>)): Promise<RawResponse[]> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  const received: Buffer[] = [];
  socket.on("data", (d) => received.push(d));
  const closed = new Promise((resolve) => socket.on("close", resolve));
  await new Promise((resolve) => socket.once("connect", resolve));
  if (typeof request === "string") socket.write(request);
  else await request(socket);
  await closed;
  return parseResponses(Buffer.concat(received).toString("latin1"));
}

function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  while (text.length > 0) {
    const end = text.indexOf("\r\n\r\n");
    const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
    const headers = new Headers(lines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
    const length = Number(headers.get("content-length") ?? 0);
    const body = text.slice(end + 4, end + 4 + length);
    out.push({ status: Number(statusLine!.split(" ")[1]), headers, body: body ? JSON.parse(body) : null });
    text = text.slice(end + 4 + length);
  }
  return out;
}

describe("routing", () => {
  it("answers a path parameter longer than any real one with 400 parameter_invalid naming it", async () => {
    expectError(await app.call("GET", `/v1/charges/chrg_${"x".repeat(300)}`), 400, "parameter_invalid", "id");
    expectError(await app.call("GET", `/v1/charges/order/${"o".repeat(201)}`), 400, "parameter_invalid", "orderId");
    // Checked before authentication: no key is needed to learn that the URL cannot name anything.
    expectError(await app.call("DELETE", `/v1/customers/${"c".repeat(201)}`, { key: null }), 400, "parameter_invalid", "id");
  });

  it("finds a charge by an order id of up to 200 characters (the router's 100 once made it 414)", async () => {
    const orderId = "o".repeat(200);
    const created = await app.call("POST", "/v1/charges", { body: { orderId, amount: "25" } });
    expect(created.status).toBe(201);
    const found = await app.call("GET", `/v1/charges/order/${orderId}`);
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(created.body.id);
  });

  it("answers a long segment on an unknown route with 404 resource_missing", async () => {
    expectError(await app.call("PUT", `/v1/charges/${"x".repeat(300)}`), 404, "resource_missing", null);
  });

  it.each(["/v1/charges/%E0%A4%A", "/nothing/%zz", "/v1/customers/%?email=a@b.co"])(
    "answers a malformed %%-escape (%s) with 400 parameter_invalid",
    async (path) => {
      const res = await app.call("GET", path);
      expectError(res, 400, "parameter_invalid", null);
      expect(res.body.message).toMatch(/percent-encoding/);
    },
  );

  it("answers a method no route has with 404 resource_missing", async () => {
    expectError(await app.call("PROPFIND", "/v1/charges"), 404, "resource_missing", null);
    expectError(await app.call("PUT", "/v1/customers"), 404, "resource_missing", null);
  });
});

describe("bodies", () => {
  it.each([
    ["text/plain", "text/plain", '{"email":"a@b.co","name":"A"}', "body_invalid_json"],
    ["no content type at all", "", '{"email":"a@b.co","name":"A"}', "body_invalid_json"],
    ["malformed JSON", "application/json", '{"email":', "body_invalid_json"],
    ["a __proto__ key", "application/json", '{"email":"a@b.co","name":"A","__proto__":{"admin":true}}', "body_invalid_json"],
    ["a constructor.prototype key", "application/json", '{"email":"a@b.co","name":"A","constructor":{"prototype":{"admin":true}}}', "body_invalid_json"],
    ["a body over 100 KB", "application/json", JSON.stringify({ email: "a@b.co", name: "A", description: "x".repeat(200_000) }), "parameter_invalid"],
  ])("answers %s with 400 %s", async (_label, type, raw, code) => {
    const res = await app.call("POST", "/v1/customers", { raw, headers: type ? { "content-type": type } : {} });
    expectError(res, 400, code, null);
  });
});

describe("requests Node answers before Fastify", () => {
  it("answers an unknown method with 400 parameter_invalid", async () => {
    expectError(await app.call("BREW", "/v1/charges"), 400, "parameter_invalid", null);
  });

  it("answers headers over Node's limit with 431", async () => {
    expectError(await app.call("GET", "/v1/charges", { headers: { "x-padding": "p".repeat(20_000) } }), 431, "parameter_invalid", null);
  });

  it.each([
    ["a garbled request line", "HELLO\r\n\r\n", 400, "parameter_invalid", null],
    ["a Content-Length that is not a number", "POST /v1/customers HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}", 400, "parameter_invalid", null],
    [
      "two different Content-Lengths",
      "POST /v1/customers HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
      400,
      "parameter_invalid",
      null,
    ],
    ["broken chunked framing", "POST /v1/customers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "parameter_invalid", null],
    ["an HTTP/1.1 request without Host", "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", 400, "parameter_missing", "Host"],
    [
      "an expectation other than 100-continue",
      "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: coffee\r\nConnection: close\r\n\r\n",
      417,
      "parameter_invalid",
      "Expect",
    ],
  ])("answers %s with the error body", async (_label, request, status, code, param) => {
    const [res, ...more] = await raw(app.url, request);
    expect(more).toEqual([]);
    expectError(res!, status, code, param);
  });

  it("still serves HTTP/1.0 without Host and Expect: 100-continue", async () => {
    const [old] = await raw(app.url, "GET /healthz HTTP/1.0\r\n\r\n");
    expect(old).toMatchObject({ status: 200, body: { status: "ok" } });
    const [continued] = await raw(app.url, async (socket) => {
      socket.write(
        `POST /v1/customers HTTP/1.1\r\nHost: x\r\nX-API-Key: ${app.testKey}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      );
      await new Promise((resolve) => socket.once("data", resolve));
      socket.write("{}");
    }).then((r) => r.filter((x) => x.status !== 100));
    // The customer route's own validation answered: the request got through.
    expectError(continued!, 400, "parameter_missing", "email");
  });
});

describe("shutting down", () => {
  it("answers the request in flight with Connection: close, and one that arrives on a kept-alive connection with 503", async () => {
    const server = createServer(pino({ level: "silent" }), {} as Database, { distributed: false } as PubSub);
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    server.get("/slow", async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      return { done: true };
    });
    const url = await server.listen({ port: 0, host: "127.0.0.1" });

    let closed!: Promise<void>;
    const [[slow], [before, refused]] = await Promise.all([
      raw(url, async (socket) => {
        socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
      }),
      raw(url, async (socket) => {
        // A kept-alive connection, idle when the close begins.
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        await new Promise((resolve) => socket.once("data", resolve));
        await running;
        closed = server.close();
        // Draining has begun once the listener is closed; this connection is not dropped meanwhile.
        await until("the listener closed", () => !server.server.listening, 5_000, 5);
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        await new Promise((resolve) => socket.once("data", resolve));
        release();
      }),
    ]);
    await closed;
    expect(before).toMatchObject({ status: 200 });
    expectError(refused!, 503, "internal_error", null);
    expect(refused!.headers.get("connection")).toBe("close");
    expect(slow).toMatchObject({ status: 200, body: { done: true } });
    expect(slow!.headers.get("connection")).toBe("close");
  });
});
