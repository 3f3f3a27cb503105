import { defineConfig } from "vitest/config";

// The browser tests (npm run test:browser): Debian's chromium through playwright-core. Same module
// alias as the main config, for the same reason (one copy of graphql).
export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: "graphql/index.js" }] },
  test: {
    root: new URL("..", import.meta.url).pathname,
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One file at a time: each drives Chromium against its own service and devnet, and side by side
    // on a small CI machine their timing-sensitive waits (live updates, confirmations) starve.
    fileParallelism: false,
  },
});
