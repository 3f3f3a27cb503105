// Builds the SDK package into src/sdk/dist: ES modules in dist/esm and CommonJS in dist/cjs, each
// with its own declarations, so TypeScript types an importer and a requirer by the file Node loads
// for each. Run by `npm run build:sdk` (and `npm run build`), and by the root's `prepare` (an install
// of the repository from git gets a built `stablegate/sdk`). The SDK's own package has no scripts (its
// tarball ships dist/ alone, not this file): build, then `npm pack` in src/sdk. It compiles with the
// repository's TypeScript: `npm ci` at the repository's root first.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const dist = new URL("dist/", import.meta.url);
const project = fileURLToPath(new URL("../../.config/tsconfig.sdk.json", import.meta.url));
const tsc = (...args) =>
  execFileSync(process.execPath, [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-p", project, ...args], { stdio: "inherit" });

// Files of an older build must not linger into the package.
rmSync(dist, { recursive: true, force: true });
tsc();
// The same options otherwise (one tsconfig, which the image's build also copies).
tsc("--module", "commonjs", "--moduleResolution", "node10", "--outDir", fileURLToPath(new URL("cjs", dist)));
// The package is "type": "module"; the CommonJS files need a scope of their own.
writeFileSync(new URL("cjs/package.json", dist), `{ "type": "commonjs" }\n`);
