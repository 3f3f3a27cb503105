// Builds dist/ (as `npm start` does before starting), for the tests that run the real entry points
// (npm start, the CLI), import the built `stablegate/sdk` or load the dashboard's bundle. The build
// takes a minute on a busy machine, so .config/build.mjs rebuilds only the parts whose sources differ
// from the stamp the last build left in dist/ (a build by `npm start` on another branch writes its
// own stamp there, so switching back rebuilds). Unchanged sources also passed tsc's type check last time.
import { execFileSync } from "node:child_process";

export default function setup(): void {
  execFileSync(process.execPath, [".config/build.mjs"], { stdio: "inherit" });
}
