// The browser tests' chromium (Debian's, through playwright-core) and their accessibility check.
import { type Browser, chromium, type Page } from "playwright-core";

/** Starts headless chromium (CHROMIUM_PATH, default /usr/bin/chromium), with no network of its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
}

/** axe-core's serious and critical findings on the page as it is, one line each (the page needs bypassCSP). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: new URL("../../node_modules/axe-core/axe.min.js", import.meta.url).pathname });
  const violations: { id: string; help: string; impact: string }[] = await page.evaluate(async () => (await (window as any).axe.run()).violations);
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.help}`);
}
