// Bundles the dashboard (src/dashboard/web) into dist/dashboard/assets: one script and one
// stylesheet, minified, no CDN. Prints their compressed size; the first load must stay under 60 KB.
// Every graphql(`…`) document of the dashboard is persisted on the way: its printed text goes into
// dist/dashboard/persisted-operations.json under its sha256 (what the server runs for a dashboard
// session, src/graphql/persisted.ts), and the bundle carries the hash, which is all it sends.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { parse, print } from "graphql";

const root = new URL("..", import.meta.url);
const out = new URL("dist/dashboard/assets/", root);
mkdirSync(out, { recursive: true });

/** Hash → printed text of each document, filled as esbuild loads the dashboard's sources. */
const persisted = new Map();
/** Wraps each graphql(`…`) call as graphql.persisted(hash, graphql(`…`)): gql.tada's stand-in, the document with its hash as documentId. */
const persistDocuments = {
  name: "persisted-operations",
  setup(bundle) {
    bundle.onLoad({ filter: /\/src\/dashboard\/web\/.*\.tsx?$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8");
      let documents = 0;
      const contents = source.replace(/graphql\(`([\s\S]*?)`\)/g, (call, body) => {
        documents++;
        const text = print(parse(body));
        const hash = createHash("sha256").update(text).digest("hex");
        persisted.set(hash, text);
        return `graphql.persisted(${JSON.stringify(hash)}, ${call})`;
      });
      // Any other shape (a document with fragments, a variable) would reach the server as text,
      // which production refuses a dashboard session: fail here rather than there.
      const calls = source.match(/\bgraphql\((?!\))/g)?.length ?? 0;
      if (calls !== documents) throw new Error(`${path}: every graphql(…) call must be graphql(\`…\`) with one document and no fragments, to be persisted`);
      return { contents, loader: path.endsWith(".tsx") ? "tsx" : "ts" };
    });
  },
};

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
  plugins: [persistDocuments],
});
writeFileSync(new URL("app.css", out), readFileSync(new URL("src/dashboard/web/app.css", root)));
const manifest = Object.fromEntries([...persisted].sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(new URL("dist/dashboard/persisted-operations.json", root), `${JSON.stringify(manifest, null, 2)}\n`);
const size = (name) => gzipSync(readFileSync(new URL(name, out))).length;
const total = size("app.js") + size("app.css");
console.log(`dashboard: app.js + app.css = ${(total / 1024).toFixed(1)} KB gzipped, ${persisted.size} persisted operations`);
if (total > 60 * 1024) throw new Error("the dashboard's first load is over 60 KB compressed");
