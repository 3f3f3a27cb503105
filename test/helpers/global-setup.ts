// Builds dist/ once, for the tests that run the real entry points (npm start, the CLI).
import { execFileSync } from "node:child_process";

export default function setup(): void {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "."], { stdio: "inherit" });
}
