// What the dashboard's browser tests share: a page of its own, signing in, the navigation, and the
// check every page passes at a width (no sideways scroll, a screenshot, no serious axe finding).
import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";
import { seriousViolations } from "../helpers/browser.js";

/** The password every dashboard test user gets. */
export const PASSWORD = "a long enough password";
const OUTPUT = new URL("../.output/", import.meta.url);

/** A page in a context of its own, `width` wide (bypassCSP: axe is added to the page as a script). */
export async function openPage(
  browser: Browser,
  options: { width?: number; height?: number; bypassCSP?: boolean; acceptDownloads?: boolean } = {},
): Promise<Page> {
  const { width = 1280, height = 900, bypassCSP = true, acceptDownloads } = options;
  const context = await browser.newContext({ viewport: { width, height }, bypassCSP, ...(acceptDownloads && { acceptDownloads }) });
  return context.newPage();
}

/** How a test signs in: another password, a two-factor code, a page below /dashboard to start from. */
type SignInOptions = { password?: string; code?: string; path?: string };

/** Fills the sign-in form at `baseUrl`/dashboard`path` and submits it (with the two-factor `code` when given). */
export async function submitSignIn(page: Page, baseUrl: string, email: string, options: SignInOptions = {}): Promise<void> {
  await page.goto(`${baseUrl}/dashboard${options.path ?? ""}`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(options.password ?? PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  if (options.code === undefined) return;
  await page.getByLabel("Two-factor code").fill(options.code);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Resolves once the dashboard shows a signed-in session. */
export const signedIn = (page: Page) => page.getByRole("button", { name: "Sign out" }).waitFor({ timeout: 10_000 });

/** Signs `email` in and waits for the dashboard. */
export async function signInAs(page: Page, baseUrl: string, email: string, options: SignInOptions = {}): Promise<void> {
  await submitSignIn(page, baseUrl, email, options);
  await signedIn(page);
}

/** Opens a page from the navigation. */
export const go = (page: Page, name: string) => page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name, exact: true }).click();

/**
 * Checks the page as it is at `width`: nothing scrolls sideways, a screenshot (test/.output/`file`-`width`.png),
 * no serious axe finding. With `resize`, the viewport is set to `width` first.
 */
export async function auditPage(page: Page, file: string, width: number, options: { resize?: boolean } = {}): Promise<void> {
  if (options.resize) await page.setViewportSize({ width, height: 900 });
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: new URL(`${file}-${width}.png`, OUTPUT).pathname, fullPage: true });
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${file} at ${width}`).toBeLessThanOrEqual(width);
  expect(await seriousViolations(page), `${file} at ${width}`).toEqual([]);
}
