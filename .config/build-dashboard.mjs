// Bundles the dashboard (src/dashboard/web) into dist/dashboard/assets: the entry script, the chunks
// of the pages it loads when first shown (chunks/, content-hashed), and one stylesheet, minified, no
// CDN. Prints the first load's compressed size (the entry, the chunks it imports statically and the
// stylesheet), which must stay under 60 KB: a page's own code is not in it; their list goes to
// dist/dashboard/first-load.json.
// Every graphql(`…`) operation of the dashboard is persisted on the way: its printed text, with the
// fragments it spreads, goes into dist/dashboard/persisted-operations.json under its sha256 (what the
// server runs for a dashboard session, src/graphql/persisted.ts), and the bundle carries the hash,
// which is all it sends.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
/** A graphql(`…`) call, with or without the fragments it spreads (graphql(`…`, [A, B])). */
const DOCUMENT = /graphql\(\s*`([\s\S]*?)`(?:\s*,\s*\[[\w\s,]*\])?\s*,?\s*\)/g;
const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : []));
/** Name → text of every fragment the dashboard defines: an operation is persisted with those it spreads. */
const fragments = new Map();
for (const path of sources(new URL("src/dashboard/web/", root).pathname)) {
  for (const [, body] of readFileSync(path, "utf8").matchAll(DOCUMENT)) {
    for (const d of parse(body).definitions) {
      if (d.kind !== "FragmentDefinition") continue;
      if (fragments.has(d.name.value)) throw new Error(`${path}: fragment ${d.name.value} is defined twice in the dashboard`);
      fragments.set(d.name.value, print(d));
    }
  }
}
/** `text` with the fragments it spreads, transitively, after it: the whole document the server runs. */
function withFragments(text) {
  const names = new Set();
  const visit = (t) => {
    for (const [, name] of t.matchAll(/\.\.\.\s*([_A-Za-z]\w*)/g)) {
      if (name === "on" || names.has(name)) continue;
      if (!fragments.has(name)) throw new Error(`fragment ${name} is spread but not defined in the dashboard`);
      names.add(name);
      visit(fragments.get(name));
    }
  };
  visit(text);
  return [text, ...[...names].sort().map((n) => fragments.get(n))].join("\n\n");
}
/**
 * Wraps each operation's graphql(`…`) call as graphql.persisted(hash, graphql(`…`)): gql.tada's
 * stand-in, the document with its hash as documentId; a fragment's call stays as it is.
 */
const persistDocuments = {
  name: "persisted-operations",
  setup(bundle) {
    bundle.onLoad({ filter: /\/src\/dashboard\/web\/.*\.tsx?$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8");
      let documents = 0;
      const contents = source.replace(DOCUMENT, (call, body) => {
        documents++;
        const document = parse(body);
        if (document.definitions.every((d) => d.kind === "FragmentDefinition")) return call;
        const text = print(parse(withFragments(print(document))));
        const hash = createHash("sha256").update(text).digest("hex");
        persisted.set(hash, text);
        return `graphql.persisted(${JSON.stringify(hash)}, ${call})`;
      });
      // Any other shape (a document in a variable, built from parts) would reach the server as
      // text, which production refuses a dashboard session: fail here rather than there.
      const calls = source.match(/\bgraphql\((?!\))/g)?.length ?? 0;
      if (calls !== documents)
        throw new Error(`${path}: every graphql(…) call must be graphql(\`…\`) or graphql(\`…\`, [fragments]) with one document, to be persisted`);
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
