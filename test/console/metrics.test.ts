import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSECURE, PeerClient } from "../../src/transport/index.js";
import {
  readCrawlLogSoFar,
  runUbicrawl,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { type ClusterAgent, startCluster } from "../cluster/cluster-harness.js";
import {
  consoleUrlOf,
  familyTotal,
  HTTP_FLAGS,
  type MetricFamily,
  samplesOfType,
  scrape,
} from "./console-harness.js";

/**
 * `/metrics` of running cluster agents, read by an independent parser: well-formed, counters that
 * only grow, and figures equal to `ubicrawl stats --json`'s and to the crawl logs' lines.
 */
describe("the console's /metrics", () => {
  let fixture: WebFixture;
  let agents: ClusterAgent[];
  let consoles: string[];

  beforeAll(async () => {
    // Slow enough (5 ms a response, 20 ms between requests to a host) to be scraped mid-crawl.
    fixture = await startWebFixture({ hosts: 30, pages: 3000, responseDelayMs: 5 });
    agents = await startCluster(fixture, 2, [...HTTP_FLAGS, "--delay-ms", "20"]);
    consoles = await Promise.all(agents.map(consoleUrlOf));
  }, 60_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  it("serves every family with HELP and TYPE, counters that only grow, and the stats' figures", async () => {
    const [first] = consoles as [string];
    for (const base of consoles) {
      expect(await (await fetch(`${base}/healthz`)).text()).toBe("ok\n");
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
    }
    await waitFor(
      async () => familyTotal(await scrape(first), "ubicrawl_pages_fetched_total") >= 50,
      "50 pages",
      30_000,
    );
    const before = await scrape(first);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await scrape(first);

    for (const family of after) {
      expect(typeof family.help === "string" && family.help.length > 0, `${family.name} has HELP`).toBe(true);
      expect(["counter", "gauge", "histogram", "summary"], family.name).toContain(family.type);
    }
    const names = new Set(after.map((family) => family.name));
    for (const name of [
      "ubicrawl_pages_fetched_total",
      "ubicrawl_fetched_bytes_total",
      "ubicrawl_fetch_errors_total",
      "ubicrawl_fetch_retries_total",
      "ubicrawl_robots_txt_total",
      "ubicrawl_urls_queued",
      "ubicrawl_hosts",
      "ubicrawl_peers",
      "ubicrawl_seen_urls",
      "ubicrawl_fetches_waiting_for_bandwidth",
      "ubicrawl_hosts_ready",
      "ubicrawl_longest_ready_queue",
      "ubicrawl_page_turns",
      "ubicrawl_page_turns_in_use",
      "ubicrawl_page_turns_waiting",
      "ubicrawl_paused",
      "ubicrawl_exchange_urls_sent_total",
      "ubicrawl_exchange_batches_received_total",
      "ubicrawl_pages_recovered_total",
      "ubicrawl_warc_scrubbed_files_total",
      "ubicrawl_warc_damaged_files_total",
      "ubicrawl_warc_lost_records_total",
      "ubicrawl_fetch_duration_seconds",
      "ubicrawl_page_size_bytes",
      "process_cpu_seconds_total",
      "nodejs_heap_size_used_bytes",
    ]) {
      expect(names, name).toContain(name);
    }
    for (const family of after) {
      if (family.name.startsWith("ubicrawl_") && family.type === "counter") {
        expect(family.name, "a counter's name ends in _total").toMatch(/_total$/);
      }
    }
    expectNoCounterFell(before, after);
    // Each series of a labelled histogram is compared on its own (the GC's, by kind).
    expect([...samplesOfType(after, "histogram").keys()]).toContain(
      'nodejs_gc_duration_seconds_bucket{le="1",kind="minor"}',
    );
    expect(familyTotal(after, "ubicrawl_pages_fetched_total")).toBeGreaterThan(
      familyTotal(before, "ubicrawl_pages_fetched_total"),
    );
    const peers = after.find((family) => family.name === "ubicrawl_peers");
    expect(peers?.metrics.find((metric) => metric.labels?.status === "alive")?.value).toBe("1");
    const sizes = after.find((family) => family.name === "ubicrawl_page_size_bytes");
    expect(Number(sizes?.metrics[0]?.count)).toBeGreaterThan(0);

    // Paused, with nothing in flight, the figures hold still: every source must agree.
    for (const agent of agents) await control(agent.address, "PAUSE");
    // The counters are the durable ones: they settle once the last fetches' group commit is written,
    // which can come after the last fetch has left the in-flight count. Settled means two scrapes in a
    // row with the same pages, and as many pages as the crawl log has lines for.
    const settled: MetricFamily[][] = [];
    let previous: number[] = [];
    let seen = "";
    await waitFor(
      async () => {
        settled.length = 0;
        for (const base of consoles) settled.push(await scrape(base));
        const pages = settled.map((families) => familyTotal(families, "ubicrawl_pages_fetched_total"));
        const logged = await Promise.all(
          agents.map(
            async (agent) => (await readCrawlLogSoFar(agent.dataDir)).filter((e) => e.status > 0).length,
          ),
        );
        seen = `metrics ${pages.join(", ")}; crawl logs ${logged.join(", ")}`;
        const still = pages.every((count, index) => count === previous[index] && count === logged[index]);
        previous = pages;
        return (
          still &&
          settled.every(
            (families) =>
              familyTotal(families, "ubicrawl_paused") === 1 &&
              familyTotal(families, "ubicrawl_urls_in_flight") === 0,
          )
        );
      },
      "both agents paused with nothing in flight and their figures written",
      20_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message} (last seen: ${seen})`);
    });
    let clusterPages = 0;
    for (const [index, agent] of agents.entries()) {
      const families = settled[index] as MetricFamily[];
      const stats = runUbicrawl(["stats", "--agent", agent.address, "--insecure", "--json"]);
      const { code, stdout } = await stats.waitForExit(20_000);
      expect(code).toBe(0);
      const [row] = (JSON.parse(stdout) as { agents: { pagesFetched: number; bytesFetched: number }[] })
        .agents;
      const logged = (await readCrawlLogSoFar(agent.dataDir)).filter((entry) => entry.status > 0);
      const metricPages = familyTotal(families, "ubicrawl_pages_fetched_total");
      expect(metricPages, `${agent.id}: /metrics against stats --json`).toBe(row?.pagesFetched);
      expect(metricPages, `${agent.id}: /metrics against its crawl log`).toBe(logged.length);
      expect(familyTotal(families, "ubicrawl_fetched_bytes_total")).toBe(row?.bytesFetched);
      expect(familyTotal(families, "ubicrawl_fetched_bytes_total")).toBe(
        logged.reduce((sum, entry) => sum + entry.bytes, 0),
      );
      clusterPages += metricPages;
    }
    const document = (await (await fetch(`${first}/api/stats?cluster=1`)).json()) as {
      agents: { id: string }[];
      totals: { pagesFetched: number; alive: number };
    };
    expect(document.agents.map((row) => row.id).sort()).toEqual(["agent-1", "agent-2"]);
    expect(document.totals).toMatchObject({ pagesFetched: clusterPages, alive: 2 });

    for (const agent of agents) await control(agent.address, "RESUME");
    for (const agent of agents) expect((await agent.process.waitForExit(90_000)).code).toBe(0);
  }, 150_000);
});

/** Fails when a counter or histogram sample of `before` is lower (or gone) in `after`. */
function expectNoCounterFell(before: readonly MetricFamily[], after: readonly MetricFamily[]): void {
  for (const type of ["counter", "histogram"]) {
    const earlier = samplesOfType(before, type);
    const later = samplesOfType(after, type);
    expect(earlier.size, type).toBeGreaterThan(0);
    for (const [key, value] of earlier) {
      expect(later.get(key), `${key} fell`).toBeGreaterThanOrEqual(value);
    }
  }
}

async function control(address: string, action: "PAUSE" | "RESUME"): Promise<void> {
  const client = new PeerClient(address, { security: INSECURE, requestDeadlineMs: 5000 });
  try {
    expect((await client.control({ action, argument: "" })).ok).toBe(true);
  } finally {
    client.close();
  }
}
