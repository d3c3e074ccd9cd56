import { defineConfig } from "vitest/config";

/**
 * The suite in two tiers, run one after the other by `npm test`:
 * - **unit**: the folders whose tests run in this process only (no agent process, no CLI), in
 *   parallel — `npm run test:unit` for quick feedback;
 * - **system**: everything else — real agents as real processes, clusters, the CLI, experiments and
 *   benches — one file at a time: they crawl at full speed and time their crawls, and on a 2-CPU
 *   machine two of them at once make each other's timing dishonest.
 */
const UNIT_FOLDERS = [
  "core",
  "failure-detector",
  "fetching",
  "flags",
  "frontier",
  "hashing",
  "parsing",
  "robots",
  "storage",
  "testweb",
  "transport",
  "url",
].map((folder) => `test/${folder}/**/*.test.ts`);

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: { name: "unit", include: UNIT_FOLDERS, fileParallelism: true, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "system",
          include: ["test/**/*.test.ts"],
          exclude: UNIT_FOLDERS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
