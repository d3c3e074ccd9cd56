import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Many files start real agent processes and time their crawls: on a 2-core machine, running test
    // files one at a time keeps their timing honest (the whole suite still takes a few minutes).
    fileParallelism: false,
  },
});
