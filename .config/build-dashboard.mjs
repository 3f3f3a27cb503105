// Bundles the dashboard (src/dashboard/web) into dist/dashboard/assets: the entry script, the chunks
// of the pages it loads when first shown (chunks/, content-hashed), and one stylesheet, minified, no
// CDN. Prints the first load's compressed size (the entry, the chunks it imports statically and the
// stylesheet), which must stay under 60 KB: a page's own code is not in it; their list goes to
// dist/dashboard/first-load.json.
// Every graphql(`…`) document of the dashboard is persisted on the way: its printed text goes into
// dist/dashboard/persisted-operations.json under its sha256 (what the server runs for a dashboard
// session, src/graphql/persisted.ts), and the bundle carries the hash, which is all it sends.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { parse, print } from "graphql";

const root = new URL("..", import.meta.url);
const out = new URL("dist/dashboard/assets/", root);
// Chunks are named by their hash: those of an earlier build would pile up.
rmSync(new URL("chunks/", out), { recursive: true, force: true });
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

const { metafile } = await build({
  entryPoints: { app: new URL("src/dashboard/web/main.tsx", root).pathname },
  bundle: true,
  splitting: true,
  metafile: true,
  minify: true,
  format: "esm",
  target: "es2020",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  outdir: out.pathname,
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
  plugins: [persistDocuments],
});
writeFileSync(new URL("app.css", out), readFileSync(new URL("src/dashboard/web/app.css", root)));
const manifest = Object.fromEntries([...persisted].sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync(new URL("dist/dashboard/persisted-operations.json", root), `${JSON.stringify(manifest, null, 2)}\n`);
const size = (name) => gzipSync(readFileSync(new URL(name, out))).length;
/** The entry and every chunk it imports statically, transitively: what the browser fetches before the first page. */
const firstLoad = (file, seen = new Set()) => {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const i of metafile.outputs[file].imports) if (i.kind === "import-statement") firstLoad(i.path, seen);
  return seen;
};
const entry = Object.keys(metafile.outputs).find((f) => f.endsWith("/app.js"));
const scripts = [...firstLoad(entry)].map((f) => f.slice(f.indexOf("dist/dashboard/assets/") + "dist/dashboard/assets/".length));
const total = scripts.reduce((sum, name) => sum + size(name), 0) + size("app.css");
// What the first load fetches, for `npm run bench` (test/bench/pages.mjs) to measure on the wire.
writeFileSync(new URL("dist/dashboard/first-load.json", root), `${JSON.stringify({ scripts, styles: ["app.css"] }, null, 2)}\n`);
const chunks = Object.keys(metafile.outputs).filter((f) => f.endsWith(".js")).length - 1;
console.log(
  `dashboard: first load (${scripts.length} scripts + app.css) = ${(total / 1024).toFixed(1)} KB gzipped, ${chunks} chunks, ${persisted.size} persisted operations`,
);
if (total > 60 * 1024) throw new Error("the dashboard's first load is over 60 KB compressed");
