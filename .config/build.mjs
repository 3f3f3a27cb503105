// `npm run build` (--all) and what `npm start`, `npm run worker` and `npm run migrate` run first (no
// flag): builds the parts whose sources changed since the last build, and only those. Each part has
// its inputs (files and directories) and its outputs; a fingerprint of the inputs (every file's path
// and content, hashed) is kept per part in dist/.build-stamp.json once the part has built. A part is
// rebuilt when its fingerprint differs from the stamp's or an output is missing, so an unchanged tree
// starts in a second and a changed file rebuilds its part. Hashing contents, not modification times:
// a checkout, a branch switch or a copy changes times without changing what is built.
// Invariant: the stamp is written only after a part built successfully, so a failed build is redone.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Where the fingerprints of the last successful build are kept (dist/ goes with what it describes). */
export const STAMP = join(root, "dist", ".build-stamp.json");

const node =
  (...args) =>
  () =>
    execFileSync(process.execPath, args, { cwd: root, stdio: "inherit" });
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const LOCK = ["package.json", "package-lock.json"];

/** The parts, in build order: the server (then its database template, made by the built code), the SDK, the dashboard. */
export const PARTS = [
  {
    name: "server",
    inputs: ["src", "prisma/migrations", "tsconfig.json", ...LOCK],
    skip: ["src/dashboard/web", "src/sdk/dist"],
    outputs: ["dist/main.js", "dist/worker.js", "dist/cli/main.js", "dist/db/template.tar.gz", "dist/db/template.json"],
    build: [node(tsc, "-p", "."), node("dist/db/build-template.js")],
  },
  {
    name: "sdk",
    inputs: ["src/sdk", "src/generated/openapi.ts", ".config/tsconfig.sdk.json", "tsconfig.json", ...LOCK],
    skip: ["src/sdk/dist"],
    outputs: ["src/sdk/dist/esm/sdk/index.js", "src/sdk/dist/cjs/sdk/index.js"],
    build: [node("src/sdk/build.mjs")],
  },
  {
    name: "dashboard",
    inputs: ["src/dashboard/web", "src/lib/money.js", ".config/build-dashboard.mjs", ...LOCK],
    skip: [],
    outputs: ["dist/dashboard/assets/app.js", "dist/dashboard/persisted-operations.json"],
    build: [node(".config/build-dashboard.mjs")],
  },
];

/** The fingerprint of `part`'s inputs: every file under them (sorted, skipped directories left out), path and content. */
export function fingerprint(part, base = root) {
  const hash = createHash("sha256");
  const skip = new Set(part.skip.map((s) => join(base, s)));
  const visit = (path) => {
    if (skip.has(path) || !existsSync(path)) return;
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      hash
        .update(`${relative(base, path)}\0`)
        .update(readFileSync(path))
        .update("\0");
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) visit(join(path, e.name));
  };
  for (const input of part.inputs) visit(join(base, input));
  return hash.digest("hex");
}

function readStamp(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return {};
  }
}

/**
 * Builds every part (`all`) or those whose inputs changed or outputs are missing; returns the names built.
 * `parts`, `base` and `stampFile` are this repository's unless given (tests).
 */
export function build({ all = false, log = (line) => console.log(line), parts = PARTS, base = root, stampFile = STAMP } = {}) {
  const stamp = readStamp(stampFile);
  const built = [];
  for (const part of parts) {
    const print = fingerprint(part, base);
    const current = stamp[part.name] === print && part.outputs.every((o) => existsSync(join(base, o)));
    if (current && !all) continue;
    log(`build: ${part.name}${all ? "" : " (its sources changed since the last build)"}`);
    for (const step of part.build) step();
    stamp[part.name] = print;
    mkdirSync(dirname(stampFile), { recursive: true });
    writeFileSync(stampFile, `${JSON.stringify(stamp, null, 2)}\n`);
    built.push(part.name);
  }
  if (built.length === 0) log("build: up to date (sources unchanged since the last build)");
  return built;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) build({ all: process.argv.includes("--all") });
