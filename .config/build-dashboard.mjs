// Bundles the dashboard (src/dashboard/web) into dist/dashboard/assets: one script and one
// stylesheet, minified, no CDN. Prints their compressed size; the first load must stay under 150 KB.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = new URL("..", import.meta.url);
const out = new URL("dist/dashboard/assets/", root);
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [new URL("src/dashboard/web/main.tsx", root).pathname],
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  outfile: new URL("app.js", out).pathname,
  logLevel: "warning",
});
writeFileSync(new URL("app.css", out), readFileSync(new URL("src/dashboard/web/app.css", root)));
const size = (name) => gzipSync(readFileSync(new URL(name, out))).length;
const total = size("app.js") + size("app.css");
console.log(`dashboard: app.js + app.css = ${(total / 1024).toFixed(1)} KB gzipped`);
if (total > 150 * 1024) throw new Error("the dashboard's first load is over 150 KB compressed");
