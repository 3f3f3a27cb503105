// GraphiQL in a real browser (Debian's chromium) with every other host unreachable: it renders from
// the service's own files (src/graphql/graphiql.ts), its editor's workers start, and a query runs,
// under the page's CSP with no script or CSP error.
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

it("renders and runs a query offline: nothing from another host, no error", async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  const elsewhere: string[] = [];
  // Offline: any request to another host fails, as it would with no network.
  await page.route(
    (url) => url.origin !== app.url && url.protocol !== "data:" && url.protocol !== "blob:",
    (route) => {
      elsewhere.push(route.request().url());
      return route.abort("internetdisconnected");
    },
  );
  page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
  page.on("pageerror", (e) => problems.push(String(e)));
  const res = await page.goto(`${app.url}/graphql`);
  expect(res?.headers()["content-security-policy"]).toMatch(/script-src 'self';/);
  // The editor (Monaco) is drawn, and the page is not stuck on a loading message.
  await page.locator(".graphiql-container").first().waitFor({ timeout: 60_000 });
  await page.locator(".monaco-editor").first().waitFor({ timeout: 60_000 });
  expect(await page.textContent("body")).not.toMatch(/Loading (Stablegate|__TITLE__)/);
  // The default document runs against this service: its answer (data or errors) is shown.
  await page.getByRole("button", { name: /execute query/i }).click();
  await page
    .locator(".graphiql-response")
    .getByText(/"errors"|"data"/)
    .first()
    .waitFor({ timeout: 30_000 });
  expect(problems).toEqual([]);
  expect(elsewhere).toEqual([]);
  await page.close();
});
