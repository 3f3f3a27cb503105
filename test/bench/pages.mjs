// `npm run build && node test/bench/pages.mjs`: first-load bytes on the wire, compressed, of the
// dashboard (its shell, the scripts of its first load as the build lists them in
// dist/dashboard/first-load.json, and its stylesheet) and of the hosted charge page (the page, its
// scripts and stylesheet), fetched over HTTP from the real service on a throwaway database with
// `Accept-Encoding: br, gzip`, with `gzip` only and without. Prints a table (stderr) and one JSON line.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { createBenchMerchant, freePort, serviceEnv, waitReady } from "./service.mjs";
import { throwawayDatabase } from "./throwaway-db.mjs";

const log = (...a) => console.error("[pages]", ...a);
const ENCODINGS = { "br, gzip": "br, gzip", gzip: "gzip", none: null };

/** The body bytes of GET `url` as sent with `acceptEncoding` (null: no Accept-Encoding), and its Content-Encoding. */
function onTheWire(url, acceptEncoding) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} }, (res) => {
      let bytes = 0;
      res.on("data", (c) => (bytes += c.length));
      res.on("end", () =>
        res.statusCode === 200
          ? resolve({ bytes, encoding: res.headers["content-encoding"] ?? "identity" })
          : reject(new Error(`${url}: HTTP ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

/** The first load of `paths` under each of ENCODINGS: total bytes and the encodings the service chose. */
async function firstLoad(service, paths) {
  const out = {};
  for (const [name, header] of Object.entries(ENCODINGS)) {
    let bytes = 0;
    const encodings = new Set();
    for (const path of paths) {
      const answer = await onTheWire(`${service}${path}`, header);
      bytes += answer.bytes;
      encodings.add(answer.encoding);
    }
    out[name] = { bytes, encodings: [...encodings].sort() };
  }
  return out;
}

const database = await throwawayDatabase("pages");
const env = serviceEnv(database.url, { RUN_WORKER: "false", DEVNET: "false" });
let child;
try {
  const { key } = createBenchMerchant(env);
  const port = await freePort();
  child = spawn(process.execPath, ["dist/main.js"], { env: { ...env, PORT: String(port) }, stdio: ["ignore", "ignore", "inherit"] });
  const service = `http://127.0.0.1:${port}`;
  await waitReady(`${service}/readyz`);
  const created = await fetch(`${service}/v1/charges`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ orderId: "pages-1", amount: "25", description: "Two mugs", cancelUrl: "https://shop.example/cart" }),
  });
  const charge = await created.json();
  if (!created.ok) throw new Error(`charge: ${JSON.stringify(charge)}`);

  // The build's own list of the dashboard's first load (.config/build-dashboard.mjs).
  const dashboard = JSON.parse(readFileSync(new URL("../../dist/dashboard/first-load.json", import.meta.url), "utf8"));
  const assets = [...dashboard.scripts, ...dashboard.styles].map((name) => `/dashboard/assets/${name}`);
  // The hosted page's own: what its HTML links (its stylesheet, its script module and the module that imports).
  const html = await (await fetch(`${service}/pay/${charge.id}`)).text();
  const linked = [...html.matchAll(/<(?:link rel="stylesheet" href|script type="module" src)="([^"]+)"/g)].map((m) => m[1]);
  const imported = linked.some((p) => p.endsWith("/pay.js")) ? ["/pay/assets/wallets.js"] : [];
  const pages = {
    [`dashboard (shell + ${dashboard.scripts.length} scripts + ${dashboard.styles.length} stylesheet)`]: ["/dashboard", ...assets],
    [`hosted charge page (page + ${linked.length + imported.length - 1} scripts + stylesheet)`]: [`/pay/${charge.id}`, ...linked, ...imported],
  };

  const figures = {};
  for (const [name, paths] of Object.entries(pages)) figures[name] = await firstLoad(service, paths);
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  const rows = Object.entries(figures).map(([name, f]) => [
    name,
    kb(f.none.bytes),
    kb(f.gzip.bytes),
    kb(f["br, gzip"].bytes),
    `${((f["br, gzip"].bytes / f.none.bytes) * 100).toFixed(0)} %`,
  ]);
  const table = [["first-load bytes on the wire", "uncompressed", "gzip", "br, gzip", "br / uncompressed"], ...rows];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const row of table) log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  "));
  console.log(
    JSON.stringify({
      bench: "first-load bytes on the wire, compressed",
      pages: Object.fromEntries(
        Object.entries(figures).map(([name, f]) => [
          name,
          {
            uncompressed: f.none.bytes,
            gzip: f.gzip.bytes,
            brotli: f["br, gzip"].bytes,
            ratio: Number((f["br, gzip"].bytes / f.none.bytes).toFixed(3)),
            encodings: f["br, gzip"].encodings,
          },
        ]),
      ),
    }),
  );
} finally {
  child?.kill();
  await database.drop();
}
