import { defineConfig } from "vitest/config";

/**
 * The fast, in-process unit tests of the modules under mutation testing (`npm run mutation`,
 * stryker.config.json). No globalSetup, no agent processes: Stryker runs these once per mutant.
 */
export default defineConfig({
  test: {
    include: [
      "test/hashing/*.test.ts",
      "test/frontier/frontier.test.ts",
      "test/frontier/frontier-edges.test.ts",
      "test/frontier/ip-gate.test.ts",
      "test/frontier/scheduler.test.ts",
      "test/frontier/seen-set.test.ts",
      "test/frontier/windows.test.ts",
      "test/robots/*.test.ts",
      "test/url/*.test.ts",
      "test/failure-detector/*.test.ts",
      "test/transport/validate*.test.ts",
      "test/agent/host-blacklist.test.ts",
      "test/agent/fetch-retry.test.ts",
      "test/agent/host-pace.test.ts",
      "test/agent/server-push-back.test.ts",
      "test/cluster/blacklist-gossip.test.ts",
      "test/parsing/sitemap.test.ts",
      "test/dedup/digest-registry.test.ts",
      "test/dedup/duplicate-detector.test.ts",
      "test/dedup/digest-registry-edges.test.ts",
      "test/dedup/duplicate-detector-timing.test.ts",
      "test/cluster/flush-policy.test.ts",
      "test/cluster/hand-over.test.ts",
      "test/cluster/hand-over-desk.test.ts",
      "test/cluster/host-claims.test.ts",
      "test/cluster/members.test.ts",
      "test/cluster/ownership.test.ts",
      "test/cluster/takeover-grace.test.ts",
      "test/cluster/termination.test.ts",
      "test/cluster/unacked-urls.test.ts",
      "test/cluster/url-exchange.test.ts",
      "test/cluster/crawl-end.test.ts",
      "test/cluster/graceful-leave.test.ts",
      "test/cluster/heartbeat-sender.test.ts",
      "test/cluster/last-known.test.ts",
      "test/cluster/partition-stats.test.ts",
      "test/cluster/view-stabilizer.test.ts",
      "test/agent/crawl-stats.test.ts",
    ],
    // Instrumented code runs many times slower; the large-set tests shrink under this flag.
    env: { UBICRAWL_MUTATION: "1" },
    testTimeout: 120_000,
    pool: "forks",
  },
});
