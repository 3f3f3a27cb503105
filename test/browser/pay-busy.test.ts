// The hosted payment page when the service is busy (issue 42: buyers are never shed): under an
// anonymous flood being shed, the buyer's chain pick still goes through (the page's token puts its
// requests in their own lane), and a pick refused with 429 + Retry-After is tried again by the page
// without a word to the buyer, who hears of it, with a way to try again, only if it keeps failing.
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet } from "../../src/chain/chains.js";
import { launchChromium } from "../helpers/browser.js";
import { startTestChain, type TestChain } from "../helpers/chain.js";
import { POLLING, startApp, type TestApp } from "../helpers/harness.js";

let chain: TestChain;
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  chain = await startTestChain();
  // Two database connections: one place for anonymous requests, and 200 may wait for it.
  app = await startApp({ ...POLLING, DATABASE_POOL_SIZE: "2" }, { chains: new ChainSet([await chain.enabled(1)]) });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
const newCharge = async (): Promise<string> => {
  const res = await app.call("POST", "/v1/charges", { body: { orderId: `busy-${++seq}`, amount: "25" } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
};

/** A page of `chargeId`, drawn before any trouble starts; the error pages it is shown are counted. */
async function openPage(chargeId: string): Promise<{ page: Page; errors: number[] }> {
  const page = await (await browser.newContext()).newPage();
  const errors: number[] = [];
  page.on("response", (res) => {
    if (res.request().isNavigationRequest() && res.status() >= 400) errors.push(res.status());
  });
  await page.goto(`${app.url}/pay/${chargeId}`);
  await page.waitForSelector("#picker");
  return { page, errors };
}

/**
 * An anonymous flood in full swing: its requests hold the anonymous place and fill the queue behind it,
 * while more keep coming from the test (bounded: they stop by themselves after `ms`). `statuses`: the
 * flood's answers so far; `done`: all of them, once it has stopped and its places are given back.
 */
function flood(chargeId: string, ms: number): { statuses: number[]; done: Promise<number[]> } {
  const statuses: number[] = [];
  const done = (async () => {
    const held = await app.anonymous.enter();
    const waiting = Array.from({ length: 200 }, () => app.anonymous.enter());
    const until = Date.now() + ms;
    const worker = async () => {
      while (Date.now() < until) statuses.push((await fetch(`${app.url}/v1/public/charges/${chargeId}`)).status);
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    held();
    for (const w of waiting) (await w)();
    return statuses;
  })();
  return { statuses, done };
}

describe("hosted page when the service is busy", () => {
  it("under an anonymous flood being shed, the buyer's pick goes through and the page follows the charge", async () => {
    const chargeId = await newCharge();
    const { page, errors } = await openPage(chargeId);
    const { statuses, done } = flood(chargeId, 6_000);
    await expect.poll(() => statuses.includes(429), { timeout: 5_000 }).toBe(true); // the flood is on: being shed
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address", { timeout: 5_000 });
    expect(await page.locator("#address").textContent()).toBe((await app.call("GET", `/v1/charges/${chargeId}`)).body.cloneAddress);
    // The page drawn after the pick still follows the charge live under the flood (its stream carries the token).
    expect((await app.call("DELETE", `/v1/charges/${chargeId}`)).status).toBe(200);
    await expect.poll(() => page.locator("#status").getAttribute("data-status"), { timeout: 4_000 }).toBe("CANCELLED");
    const shed = await done;
    expect(shed.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(shed.every((s) => s === 429)).toBe(true);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("a pick refused with 429 and Retry-After is tried again after it, and the buyer sees no error", async () => {
    const chargeId = await newCharge();
    const { page, errors } = await openPage(chargeId);
    const tries: number[] = [];
    await page.route("**/chain*", async (route: Route) => {
      tries.push(Date.now());
      if (tries.length === 1) return route.fulfill({ status: 429, headers: { "Retry-After": "1", "content-type": "text/html" }, body: "busy" });
      return route.continue();
    });
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForSelector("#address", { timeout: 10_000 });
    expect(tries.length).toBe(2);
    expect(tries[1]! - tries[0]!).toBeGreaterThanOrEqual(1_000);
    expect(errors).toEqual([]);
    expect((await app.call("GET", `/v1/charges/${chargeId}`)).body.chainId).toBe(31337);
    await page.context().close();
  });

  it("a pick that keeps being refused is given up after a few tries, with a clear message and a way to try again", async () => {
    const chargeId = await newCharge();
    const { page, errors } = await openPage(chargeId);
    let tries = 0;
    const busy = async (route: Route) => {
      tries++;
      return route.fulfill({ status: 503, headers: { "Retry-After": "1", "content-type": "text/html" }, body: "busy" });
    };
    await page.route("**/chain*", busy);
    await page.getByRole("button", { name: "Continue" }).click();
    await expect.poll(() => page.locator("#picker-message").textContent(), { timeout: 15_000 }).toMatch(/very busy right now/);
    expect(tries).toBe(5);
    expect(page.url()).toBe(`${app.url}/pay/${chargeId}`);
    await page.unroute("**/chain*", busy);
    await page.getByRole("button", { name: "Try again" }).click();
    await page.waitForSelector("#address", { timeout: 10_000 });
    expect(errors).toEqual([]);
    await page.context().close();
  });
});
