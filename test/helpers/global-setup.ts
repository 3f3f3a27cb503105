// Builds dist/ once (as `npm run build` does), for the tests that run the real entry points (npm
// start, the CLI), import the built `stablegate/sdk` or load the dashboard's bundle. The build takes
// a quarter of a minute on CI and more on a busy machine, so it is skipped when a stamp says the
// sources are those it was last built from and the outputs are still what it wrote (not rebuilt
// since from other sources, say by `npm start` on another branch). Unchanged sources also passed tsc's
// type check last time.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** What the build reads besides src/ (the SDK's own output excluded). */
const INPUTS = ["src", "tsconfig.json", ".config/tsconfig.sdk.json", ".config/build-dashboard.mjs", "package-lock.json"];
/** What the build writes. */
const OUTPUTS = ["dist", "src/sdk/dist"];
const STAMP = "test/.output/build-stamp.json";

export default function setup(): void {
  const sources = digest(INPUTS, OUTPUTS);
  const stamp = existsSync(STAMP) ? (JSON.parse(readFileSync(STAMP, "utf8")) as { sources: string; outputs: string }) : null;
  if (stamp?.sources === sources && stamp.outputs === digest(OUTPUTS)) return;
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."], { stdio: "inherit" });
  // Both halves of the SDK (ES modules and CommonJS), as its package builds them.
  execFileSync(process.execPath, ["src/sdk/build.mjs"], { stdio: "inherit" });
  execFileSync(process.execPath, [".config/build-dashboard.mjs"], { stdio: "inherit" });
  mkdirSync("test/.output", { recursive: true });
  writeFileSync(STAMP, JSON.stringify({ sources, outputs: digest(OUTPUTS) }));
}

/** A hash of the names and contents of every file under `paths` (files or folders), leaving out the folders in `skip`. */
function digest(paths: string[], skip: string[] = []): string {
  const files = paths.flatMap((path) => {
    if (!existsSync(path)) return [];
    if (!statSync(path).isDirectory()) return [path];
    return readdirSync(path, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .filter((file) => !skip.some((folder) => file.startsWith(`${folder}/`)));
  });
  const hash = createHash("sha256");
  for (const file of files.sort()) hash.update(`${file}\0`).update(readFileSync(file)).update("\0");
  return hash.digest("hex");
}
