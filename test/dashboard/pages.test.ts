// /dashboard: the single page and its bundle, under a strict CSP, never framed, compressed when asked
// (brotli preferred, gzip otherwise: http/compression.ts), with the service's icon.
import { get } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/harness.js";

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
}, 60_000);
afterAll(() => app?.stop());

it("serves the same page at /dashboard and below it, with a CSP that allows only our own script, style and connections", async () => {
  for (const path of ["/dashboard", "/dashboard/charges/chrg_x", "/dashboard/settings"]) {
    const res = await fetch(`${app.url}${path}`);
    expect(res.status, path).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).toMatch(/<script type="module" src="\/dashboard\/assets\/app\.js\?v=[0-9a-f]{12}"><\/script>/);
    expect(html).not.toMatch(/<script>|style=/);
  }
});

it("serves the bundle gzipped to browsers that take it, cached for good under a versioned URL", async () => {
  const gz = await fetch(`${app.url}/dashboard/assets/app.js`, { headers: { "accept-encoding": "gzip" } });
  expect(gz.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(gz.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  // fetch decodes gzip itself: compare with the plain answer.
  const plain = await fetch(`${app.url}/dashboard/assets/app.js`, { headers: { "accept-encoding": "identity" } });
  expect(plain.headers.get("content-encoding")).toBeNull();
  const text = await plain.text();
  expect(await gz.text()).toBe(text);
  const raw = await new Promise<Buffer>((resolve, reject) => {
    import("node:http").then(({ get }) =>
      get(`${app.url}/dashboard/assets/app.css`, { headers: { "accept-encoding": "gzip" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks)));
      }).on("error", reject),
    );
  });
  expect(gunzipSync(raw).toString()).toContain(".test-banner");
});

/** GET `path` with exactly this Accept-Encoding: the headers and the bytes as sent. */
const raw = (path: string, acceptEncoding: string) =>
  new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    get(`${app.url}${path}`, { headers: { "accept-encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });

it("sends the page and its bundle brotli-compressed to browsers that take it, varying on Accept-Encoding; the page links the icon", async () => {
  for (const path of ["/dashboard", "/dashboard/settings", "/dashboard/assets/app.js", "/dashboard/assets/app.css"]) {
    const br = await raw(path, "gzip, deflate, br");
    expect(br.headers["content-encoding"], path).toBe("br");
    expect(br.headers.vary).toBe("Accept-Encoding");
    const gz = await raw(path, "gzip");
    expect(gz.headers["content-encoding"], path).toBe("gzip");
    expect(brotliDecompressSync(br.body).equals(gunzipSync(gz.body))).toBe(true);
    expect(br.body.length).toBeLessThan(gz.body.length);
  }
  const html = brotliDecompressSync((await raw("/dashboard", "br")).body).toString();
  expect(html).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
  expect((await fetch(`${app.url}/favicon.svg`)).status).toBe(200);
});

it("serves each page's chunk the entry imports, cached for good, and a clear 404 for a chunk of another build", async () => {
  const entry = await (await fetch(`${app.url}/dashboard/assets/app.js`)).text();
  const names = [...new Set([...entry.matchAll(/chunks\/([\w-]+\.js)/g)].map((m) => m[1]!))];
  expect(names.length).toBeGreaterThan(5);
  for (const name of names) {
    const res = await fetch(`${app.url}/dashboard/assets/chunks/${name}`, { headers: { "accept-encoding": "gzip" } });
    expect(res.status, name).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  }
  const gone = await fetch(`${app.url}/dashboard/assets/chunks/Charges-OLDBUILD.js`);
  expect(gone.status).toBe(404);
  expect(await gone.text()).toContain("reload the dashboard");
});
