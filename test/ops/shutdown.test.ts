// SIGTERM on a serving process (`npm start`'s dist/main.js, jobs included): it stops taking new
// connections, answers the request in flight (and, under load, every request: none is cut off), closes WebSockets with 1001 (going away) and ends SSE
// streams, lets the jobs finish their step, releases the embedded database, and exits 0 within 10 s.
// With SHUTDOWN_DELAY_MS it first leaves rotation: /readyz fails at once while everything else is
// still served for the delay, so a load balancer stops sending before the process stops listening.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { sseSubscribe, subscribe, wsClient } from "../helpers/live.js";
import { spawnService } from "../helpers/service-process.js";
import { ANSWERED_OR_REFUSED, steadyLoad } from "../helpers/steady-load.js";
import { until } from "../helpers/wait.js";

const dataDir = mkdtempSync(join(tmpdir(), "sg-shutdown-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `npm start` on the embedded database in `dir`, in development (a demo key printed), with `extra`. */
function startService(dir: string, extra: Record<string, string>) {
  const env = {
    ...process.env,
    DATA_DIR: dir,
    PORT: "0",
    DATABASE_URL: "",
    REDIS_URL: "",
    DEVNET: "false",
    NODE_ENV: "development",
    LOG_LEVEL: "info",
    ...extra,
  };
  return { env, service: spawnService("dist/main.js", env) };
}

/** The service's URL and its demo merchant's test key, once it listens. */
async function listening(service: ReturnType<typeof spawnService>): Promise<{ url: string; key: string }> {
  const url = (await service.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!;
  return { url, key: (await service.waitFor(/(sk_test_[A-Za-z0-9]+)/))[1]! };
}

it("drains: the request in flight is answered, none is cut off under load, WebSockets close with 1001, SSE streams end, exit 0 within 10 s", async () => {
  const { env, service } = startService(dataDir, { RATE_LIMIT_READ: "100000" });
  const { url, key } = await listening(service);
  const headers = { "x-api-key": key, "content-type": "application/json" };
  const charge = await (await fetch(`${url}/v1/charges`, { method: "POST", headers, body: JSON.stringify({ orderId: "drain", amount: "5" }) })).json();

  const ws = wsClient(url, key);
  const overWs = subscribe(ws, `subscription($id: ID!) { chargeUpdated(id: $id) { status } }`, { id: charge.id });
  const overSse = sseSubscribe(url, `subscription($id: ID!) { chargeUpdated(id: $id) { status } }`, { id: charge.id }, key);
  await overWs.waitFor(1);
  await overSse.waitFor(1);

  // A request sent just before the signal (its bytes on the wire, so the server has it to answer).
  const inFlight = fetch(`${url}/v1/charges?limit=100`, { headers }).then((r) => r.status);
  // And keep-alive clients that keep sending: each request is answered or refused, never cut off.
  const load = steadyLoad(`${url}/v1/charges/${charge.id}`, { "x-api-key": key });
  // The signal comes once the load is on: its clients have had answers, so their connections are kept alive.
  await until("the load's first answers", () => (load.outcomes.get("200") ?? 0) >= 8);
  const started = Date.now();
  service.child.kill("SIGTERM");
  expect(await inFlight).toBe(200);
  expect(await service.exited).toBe(0);
  expect(Date.now() - started).toBeLessThan(10_000);
  await load.stop();
  expect(
    [...load.outcomes].filter(([outcome]) => !ANSWERED_OR_REFUSED.includes(outcome)),
    JSON.stringify([...load.outcomes]),
  ).toEqual([]);
  expect(load.outcomes.get("200")).toBeGreaterThan(0);
  await overSse.ended(5_000);
  await overWs.ended(5_000);
  expect(ws.closes[0]?.code).toBe(1001);
  // The embedded database is free again: another process may open it.
  const again = spawnService("dist/main.js", env);
  await again.waitFor(/stablegate listening/);
  again.child.kill("SIGTERM");
  expect(await again.exited).toBe(0);
}, 60_000);

it("leaves rotation first: /readyz fails at once, requests are still served for SHUTDOWN_DELAY_MS, then it drains and exits 0", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sg-rotation-"));
  const { service } = startService(dir, { SHUTDOWN_DELAY_MS: "2000" });
  const { url, key } = await listening(service);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);

  const signalled = Date.now();
  service.child.kill("SIGTERM");
  await service.waitFor(/"msg":"shutting down"/);
  const ready = await fetch(`${url}/readyz`);
  expect(ready.status).toBe(503);
  expect(await ready.json()).toEqual({ status: "shutting_down" });
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect((await fetch(`${url}/v1/charges`, { headers: { "x-api-key": key } })).status).toBe(200);
  expect(Date.now() - signalled).toBeLessThan(2_000);

  expect(await service.exited).toBe(0);
  expect(Date.now() - signalled).toBeGreaterThanOrEqual(2_000);
  rmSync(dir, { recursive: true, force: true });
}, 60_000);
