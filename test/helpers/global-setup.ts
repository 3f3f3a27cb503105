// Builds dist/ once (as `npm run build` does), for the tests that run the real entry points (npm
// start, the CLI), import the built `stablegate/sdk` or load the dashboard's bundle.
import { execFileSync } from "node:child_process";

export default function setup(): void {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."], { stdio: "inherit" });
  // Both halves of the SDK (ES modules and CommonJS), as its package builds them.
  execFileSync(process.execPath, ["src/sdk/build.mjs"], { stdio: "inherit" });
  execFileSync(process.execPath, [".config/build-dashboard.mjs"], { stdio: "inherit" });
}
