// GET /docs in a real browser (Debian's chromium): Swagger UI, served by the service itself, draws
// every operation and webhook of /v1/openapi.json under the page's strict CSP, with no script or CSP
// error, and an error body's docUrl lands on its code's entry.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
let browser: Browser;
beforeAll(async () => {
  app = await startApp();
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

it("shows every documented operation, from this origin only, without errors", async () => {
  const doc = await (await fetch(`${app.url}/v1/openapi.json`)).json();
  const operations = [...Object.values(doc.paths), ...Object.values(doc.webhooks)].reduce((n: number, ops) => n + Object.keys(ops as object).length, 0);
  const page = await browser.newPage();
  const problems: string[] = [];
  const origins = new Set<string>();
  page.on("console", (m) => void (["error", "warning"].includes(m.type()) && problems.push(m.text())));
  page.on("pageerror", (e) => problems.push(String(e)));
  page.on("request", (r) => void (r.url().startsWith("data:") || origins.add(new URL(r.url()).origin)));
  const res = await page.goto(`${app.url}/docs`);
  expect(res?.headers()["content-security-policy"]).toMatch(/script-src 'self';/);
  await page.getByText("Create a charge (a payment request)").waitFor();
  expect(await page.locator(".opblock").count()).toBe(operations);
  // An operation opens with its responses and their codes.
  await page.getByText("Create a charge (a payment request)").click();
  await page.getByText("duplicate_order_id").first().waitFor();
  expect(problems).toEqual([]);
  expect([...origins]).toEqual([app.url]);
  await page.close();
});

it("has the entry an error's docUrl points to", async () => {
  const { body } = await app.call("GET", "/v1/customers/cus_nothere");
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("console", (m) => void (["error", "warning"].includes(m.type()) && problems.push(m.text())));
  await page.goto(body.docUrl.replace(/^.*\/docs/, `${app.url}/docs`));
  const entry = page.locator(`[id="${new URL(body.docUrl).hash.slice(1)}"]`);
  await entry.waitFor({ state: "attached" });
  expect(await entry.evaluate((e) => e.closest("li")?.textContent)).toMatch(/resource_missing \(404\)/);
  expect(problems).toEqual([]);
  await page.close();
});
