import { defineConfig } from "vitest/config";

/**
 * The suite in tiers, run one after the other by `npm test`:
 * - **unit**: the folders whose tests run in this process only (no agent process, no CLI process: the
 *   CLI's commands run in process are in test/commands), in parallel — `npm run test:unit` for quick
 *   feedback;
 * - **system**: real agents as real processes, clusters, the CLI, experiments, two files at a time
 *   (they crawl at full speed, so two already fill two CPUs; one at a time took 31 min);
 * - **timed**: the system tests that measure time, rates or memory (gaps between requests, a bandwidth
 *   bound, a rejoin, benches' figures), one file at a time, alone on the machine.
 */
const UNIT_FOLDERS = [
  "commands",
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

/**
 * The benches' helpers tested on made-up figures (no crawl, no process): unit tests in the bench folder,
 * whose other files run the benches.
 */
const UNIT_FILES = [
  "test/bench/crawl-phases.test.ts",
  "test/bench/crawl-tail.test.ts",
  "test/bench/metrics.test.ts",
  "test/bench/mutant-list.test.ts",
];

/** System tests whose figures a second test file at the same time would distort. */
const TIMED = [
  "test/agent/bandwidth.test.ts",
  "test/agent/crawl-delay-bound.test.ts",
  "test/agent/crawl-delay.test.ts",
  "test/agent/ip-delay.test.ts",
  "test/agent/page-turns.test.ts",
  "test/agent/politeness.test.ts",
  // The benches whose tests check the figures themselves (CPU a page, start against steady CPU, a
  // cgroup's cap) or a crawl that must outlast joins spaced in real time. bench/scaling.mjs and
  // bench/overhead.mjs are tested for their crawls' coverage and the report's shape, which load does not
  // change: they run in the system tier.
  "test/bench/cpu-quota.test.ts",
  "test/bench/membership.test.ts",
  "test/bench/processes.test.ts",
  "test/bench/run.test.ts",
  "test/cluster/ip-politeness-429.test.ts",
  "test/deploy/rejoin.test.ts",
  "test/export/export-memory.test.ts",
  "test/hostile/slow-and-big.test.ts",
  "test/lab/balance-experiment.test.ts",
  "test/lab/timed-experiments.test.ts",
];

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [...UNIT_FOLDERS, ...UNIT_FILES],
          fileParallelism: true,
          // Vitest's default is one worker fewer than the CPUs: one, on a 2-CPU machine, so the tier ran
          // a file at a time (a run of it, with the build: 129 s; at 2 workers 77 s, at 3 81 s).
          maxWorkers: 2,
          // One process a worker for all its files, the modules loaded once: a fresh process and import
          // per file took more than the tests (the tier in 88 s isolated, 37-40 s not, three runs).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "system",
          include: ["test/**/*.test.ts"],
          exclude: [...UNIT_FOLDERS, ...UNIT_FILES, ...TIMED],
          fileParallelism: true,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: "timed", include: TIMED, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
