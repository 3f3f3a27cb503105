import { defineConfig } from "vitest/config";
import main from "./vitest.config.ts";

// The process-level tests (npm run test:ops): the service, the worker and the CLI as operators run
// them, each case spawning its own processes. Everything else as in the main config.
export default defineConfig({
  ...main,
  test: { ...main.test, include: ["test/ops/**/*.test.ts"], exclude: ["**/node_modules/**"] },
});
