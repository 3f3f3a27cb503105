// The per-request log line names the path, never the query string: queries carry customer emails
// and searches, and neither errors before routing nor unparsable requests bring them back.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createMerchant } from "../../src/domain/merchants.js";
import { freshDatabase, UNLIMITED_ADDRESS, WALLET } from "../helpers/harness.js";
import { recordingLogger } from "../helpers/logs.js";

const SECRET = "secret@example.com";
const log = recordingLogger();
let app: App;
let url: string;
let key: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  const fresh = await freshDatabase();
  drop = fresh.drop;
  const config = loadConfig({ NODE_ENV: "test", LOG_LEVEL: "info", REDIS_URL: process.env.REDIS_URL, PORT: "0", ...UNLIMITED_ADDRESS });
  app = await buildApp(config, { db: fresh.db, logger: log.logger });
  url = await app.start(0);
  const merchant = await createMerchant(fresh.db.prisma, { name: "Log Shop", testWallet: WALLET, liveWallet: WALLET }, { feeBps: 100 });
  key = merchant.apiKeys.test.secret;
});
afterAll(async () => {
  await app?.stop();
  await drop?.();
});

const requestLines = () => log.lines().filter((l) => l.msg === "request");

describe("the request log line", () => {
  it.each([
    ["a listed search", "/v1/customers", 200],
    ["an unknown URL", "/v1/nothing", 404],
    ["a URL the router cannot decode", "/v1/customers/%zz", 400],
  ])("logs the path of %s without its query", async (_label, path, status) => {
    const res = await fetch(`${url}${path}?email=${SECRET}&query=${encodeURIComponent(SECRET)}`, { headers: { "x-api-key": key } });
    expect(res.status).toBe(status);
    const requestId = res.headers.get("x-request-id");
    await vi.waitFor(() => expect(requestLines().find((l) => l.requestId === requestId)).toMatchObject({ method: "GET", path, status }));
    expect(log.text()).not.toContain("secret");
  });

  it("logs a request Node could not parse by its request id and the parser's reason only", async () => {
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (d) => (answer += d));
    socket.write(`GET /v1/customers?email=${SECRET} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`);
    await new Promise((resolve) => socket.on("close", resolve));
    const requestId = /X-Request-Id: (\S+)/.exec(answer)?.[1];
    expect(log.lines().find((l) => l.requestId === requestId)).toMatchObject({ msg: "unparsable request", status: 400, reason: "HPE_INVALID_CONTENT_LENGTH" });
    expect(log.text()).not.toContain("secret");
  });
});
