import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // Node loads graphql's CommonJS build for our dependencies; make Vite use the same copy for our
  // code, or GraphQL types and errors from two module instances would not match.
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["test/**/*.test.ts"],
    // Browser tests need chromium: npm run test:browser (run by .ci/run).
    exclude: ["test/browser/**", "**/node_modules/**"],
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two files at a time even on a 2-CPU machine (vitest's default would be one): most files wait
    // on a database, a chain or a child process, and every file has its own database and ports.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Transformed modules kept on disk (under node_modules, so a reinstall clears them) for the next
    // run: every file imports most of src/, which otherwise is transformed again on each run.
    experimental: { fsModuleCache: true },
  },
});
