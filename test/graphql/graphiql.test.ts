// GraphiQL (outside production, src/graphql/graphiql.ts) is served from the service's own files, so it
// works offline: the page names no other host, every script and style it loads (and the editor's
// workers) answers 200 from this origin, and its Content-Security-Policy allows what it needs and
// nothing from elsewhere. In production neither the page nor its files are served.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

const page = () => fetch(`${app.url}/graphql`, { headers: { accept: "text/html" } });

/** The URLs of the page's scripts and stylesheets, as written in it. */
function assetsOf(html: string): string[] {
  const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map(([, attrs]) => /\bsrc="([^"]+)"/.exec(attrs!)?.[1] ?? "inline");
  const styles = [...html.matchAll(/<link\b[^>]*\brel="stylesheet"[^>]*>/g)].map(([tag]) => /\bhref="([^"]+)"/.exec(tag)![1]!);
  return [...scripts, ...styles];
}

describe("GraphiQL", () => {
  it("is a page whose scripts and styles are all this origin's files, with no inline script", async () => {
    const res = await page();
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/<div id="root" data-options="[^"]*"><\/div>/);
    // No other host anywhere in the page (the CDN's unpkg.com before).
    expect(html).not.toMatch(/https?:\/\//);
    const assets = assetsOf(html);
    expect(assets).toEqual(["/graphiql/start.js", "/graphiql/graphiql.js", "/graphiql/graphiql.css"]);
    for (const url of assets) {
      const asset = await fetch(`${app.url}${url}`, { headers: { "accept-encoding": "gzip" } });
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get("content-type"), url).toMatch(url.endsWith(".css") ? /^text\/css/ : /^text\/javascript/);
      expect((await asset.text()).length, url).toBeGreaterThan(url.endsWith("start.js") ? 100 : 100_000);
    }
  });

  it("serves the editor's workers from this origin, named as the start script asks for them", async () => {
    const start = await (await fetch(`${app.url}/graphiql/start.js`)).text();
    expect(start).toContain('"/graphiql/" + ');
    expect(start).toContain(' + ".worker.js"');
    for (const label of ["editor", "json", "graphql"]) {
      expect(start).toContain(`"${label}"`);
      const worker = await fetch(`${app.url}/graphiql/${label}.worker.js`);
      expect(worker.status, label).toBe(200);
      expect(worker.headers.get("content-type")).toMatch(/^text\/javascript/);
    }
  });

  it("holds the page to a policy that allows this origin's scripts, workers and connections only", async () => {
    const csp = (await page()).headers.get("content-security-policy")!;
    const directives = Object.fromEntries(csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]));
    expect(directives).toMatchObject({
      "default-src": "'none'",
      "script-src": "'self'",
      "worker-src": "'self'",
      "connect-src": "'self'",
      "font-src": "'self' data:",
      "frame-ancestors": "'none'",
    });
    // The editor writes its styles at run time; scripts stay this origin's files alone.
    expect(directives["style-src"]).toBe("'self' 'unsafe-inline'");
    expect((await fetch(`${app.url}/graphiql/graphiql.js`)).headers.get("content-security-policy")).toBe(csp);
  });

  it("is not served in production, nor are its files", async () => {
    const prod = await startApp({ NODE_ENV: "production" });
    try {
      const res = await fetch(`${prod.url}/graphql`, { headers: { accept: "text/html" } });
      expect(await res.text()).not.toMatch(/graphiql/i);
      expect((await fetch(`${prod.url}/graphiql/graphiql.js`)).status).toBe(404);
    } finally {
      await prod.stop();
    }
  });
});
