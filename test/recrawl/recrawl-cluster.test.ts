import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import {
  type ExitResult,
  readCrawlLogOf,
  servedPages,
  startWebFixture,
  type WebFixture,
} from "../agent/harness.js";
import { type ClusterAgent, startCluster } from "../cluster/cluster-harness.js";

/**
 * Two real agents crawling continuously (`--recrawl fixed`) with a membership that does not change:
 * each revisits the pages of its own hosts, conditionally, none is revisited by both, and the cluster's
 * termination detection waits for the last revisit before the horizon.
 */
describe("--recrawl in a cluster of two", () => {
  let fixture: WebFixture;
  let agents: ClusterAgent[];
  let results: ExitResult[];
  let logs: CrawlLogEntry[][];

  beforeAll(async () => {
    fixture = await startWebFixture({
      hosts: 8,
      pages: 100,
      seedCount: 1,
      mirrors: 0,
      trap: false,
      changes: { everyMs: 1000, percent: 30 },
    });
    agents = await startCluster(fixture, 2, [
      "--recrawl=fixed",
      "--recrawl-interval=3s",
      "--recrawl-horizon=7s",
      "--sitemaps=off",
    ]);
    results = await Promise.all(agents.map((agent) => agent.process.waitForExit(90_000)));
    logs = await Promise.all(agents.map((agent) => readCrawlLogOf(agent.dataDir)));
  }, 120_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  it("ends at its horizon, after the last revisit", () => {
    for (const [i, result] of results.entries())
      expect(result.code, `${agents[i]?.id}: ${result.stderr.slice(-2000)}`).toBe(0);
    expect(logs.every((log) => log.some((entry) => entry.recrawl !== undefined))).toBe(true);
  });

  it("revisits every page it fetched, each on one agent only, conditionally", () => {
    const revisitedBy = new Map<string, Set<number>>();
    for (const [i, log] of logs.entries()) {
      for (const entry of log) {
        if ((entry.visits as number) > 1)
          revisitedBy.set(entry.url, (revisitedBy.get(entry.url) ?? new Set()).add(i));
      }
    }
    const firsts = logs.flat().filter((entry) => entry.visits === 1 && entry.status === 200);
    expect(firsts.length).toBeGreaterThan(30);
    const served = servedPages(fixture.web.recorder);
    const conditional = fixture.web.recorder.conditionalCounts();
    for (const { url } of firsts) {
      expect(revisitedBy.get(url)?.size, url).toBe(1);
      expect(conditional.get(url), url).toBe((served.get(url) ?? 0) - 1);
    }
  });
});
