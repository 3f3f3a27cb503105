import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Node loads graphql's CommonJS build for our dependencies; make Vite use the same copy for our
  // code, or GraphQL types and errors from two module instances would not match.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["test/**/*.test.ts"],
    // Browser tests need chromium: npm run test:browser. The service as operators run it (processes,
    // the CLI, backups, restarts, a first start from a clone) spawns a process per case and took a
    // third of the suite's time: npm run test:ops. .ci/run runs both.
    exclude: ["test/browser/**", "test/ops/**", "**/node_modules/**"],
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One file more than there are CPUs (vitest's default is one fewer): most files spend much of
    // their time waiting on a database, a chain, a child process or their own module loading, and
    // every file has its own database and ports. On 2 CPUs three files at a time took the suite from
    // 1,104 s to 963 s.
    maxWorkers: availableParallelism() + 1,
    // Transformed modules kept on disk (under node_modules, so a reinstall clears them) for the next
    // run: every file imports most of src/, which otherwise is transformed again on each run.
    experimental: { fsModuleCache: true },
  },
});
