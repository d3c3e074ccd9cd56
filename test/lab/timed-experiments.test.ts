import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXPERIMENT_TIMEOUT_MS, experimentRunner, table } from "./experiment-runs.js";

/**
 * The experiments that measure rates and times with real agents: `bandwidth` (the crawl held under a
 * bound) and `politeness` (requests at once, gaps and 429s per address, as the test web saw them). In
 * the timed tier (vitest.config.ts): alone on the machine. The `scaling` experiment, whose checks are
 * of counts and of the simulation's own clock, is in crawl-experiments.test.ts.
 */

const experiments = experimentRunner();
const runExperiment = experiments.run;

describe("ubicrawl experiment bandwidth", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("holds the predictive control under the bound but for one page a second, where no bound goes far over", async () => {
    const { result, out, rows } = await runExperiment("bandwidth", [
      "--bound",
      "1MB/s",
      "--depths",
      "10",
      "--hosts",
      "20",
      "--pages",
      "600",
      // 10 pages a host (each bounded crawl 4-5 s at the bound, 9-11 s with 20), from hosts sending
      // 100 KB/s-2 MB/s each: unbounded, the crawl goes well over the bound (1.8 times; 1.2-1.9 with
      // the default 50 KB/s-1 MB/s, at the edge of the check below).
      "--pages-per-host",
      "10",
      "--host-rates",
      "100KB/s-2MB/s",
    ]);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (4 files`);
    expect(rows.map((r) => r.control)).toEqual(["none", "stop-and-go", "predictive, depth 10"]);
    const [none, , predictive] = rows;
    expect(Number(none?.mean_over_bound)).toBeGreaterThan(1.2);
    expect(Number(predictive?.mean_over_bound)).toBeLessThanOrEqual(1.05);
    expect(Number(predictive?.worst_second_excess_kb)).toBeLessThanOrEqual(
      Number(predictive?.largest_page_kb),
    );
    // The same pages whatever the control.
    expect(new Set(rows.map((r) => r.pages)).size).toBe(1);
    const series = await table(out, "bandwidth-over-time");
    expect(series.filter((r) => r.control === "none").length).toBeGreaterThan(0);
  });
});

describe("ubicrawl experiment politeness", { timeout: EXPERIMENT_TIMEOUT_MS }, () => {
  it("holds --max-per-ip and the IP delay at every address under the cluster limit, where agents on their own break them", async () => {
    const delayMs = 25;
    const { result, out, rows } = await runExperiment("politeness", [
      "--agents",
      "1,3",
      // The fewest pages 20 hosts take; 6 hosts on the shared address (all 6 owned by one of 3 agents
      // in 0.4% of the ports the test web may get), 2 on the rate-limited one.
      "--hosts",
      "20",
      "--pages",
      "200",
      "--shared-hosts",
      "6",
      "--limited-hosts",
      "2",
      "--ip-delay-ms",
      String(delayMs),
    ]);
    expect(result.stdout).toContain(`report: ${join(out, "report.md")} (6 files`);
    const row = (limit: string, agents: number) => {
      const found = rows.find((r) => r.limit === limit && r.agents === String(agents));
      if (!found) throw new Error(`no row for --ip-limit ${limit} at ${agents} agents`);
      return found;
    };
    expect(rows.map((r) => `${r.limit} ${r.agents}`)).toEqual([
      "agent 1",
      "cluster 1",
      "agent 3",
      "cluster 3",
    ]);
    for (const agents of [1, 3]) {
      const cluster = row("cluster", agents);
      // Never more than --max-per-ip at once anywhere, no gap shorter than the IP delay by more than
      // the test web's own lag in stamping requests, and the whole web.
      expect(Number(cluster.peak_any)).toBeLessThanOrEqual(2);
      expect(Number(cluster.min_gap_any_ms)).toBeGreaterThanOrEqual(delayMs - Number(cluster.web_lag_ms));
      expect(Number(cluster.coverage)).toBe(1);
      // The limited address takes 40 requests a second: more than 2 at once answered in 60 ms each
      // can start there, so a crawl that keeps --max-per-ip there is never refused.
      expect(Number(cluster.refused_429)).toBe(0);
    }
    expect(Number(row("agent", 1).refused_429)).toBe(0);
    // One agent keeps --max-per-ip on its own; three, each on its own, do not.
    expect(Number(row("agent", 1).peak_shared)).toBeLessThanOrEqual(2);
    expect(Number(row("agent", 3).peak_shared)).toBeGreaterThan(2);
    // Three agents' starts interleave at the shared address under their own limits, not the cluster's.
    expect(Number(row("agent", 3).min_gap_shared_ms)).toBeLessThan(delayMs / 2);
    expect(Number(row("agent", 3).short_gaps_shared)).toBeGreaterThan(
      Number(row("cluster", 3).short_gaps_shared),
    );
    // Only the cluster's limit talks to IP authorities (one agent is its own authority).
    expect(Number(row("agent", 3).ip_messages)).toBe(0);
    expect(Number(row("cluster", 3).ip_messages)).toBeGreaterThan(0);
    expect(result.stdout).toMatch(
      /holds: With --ip-limit cluster, no address ever sees more than --max-per-ip/,
    );
    expect(result.stdout).toMatch(/holds: Several agents space their starts at an address by the IP delay/);
  });
});
