import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { familyTotal, HTTP_FLAGS, scrape } from "../console/console-harness.js";
import { bytesWithin } from "../support/download-windows.js";
import {
  logEvent,
  readCrawlLogOf,
  spawnAgent,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "./harness.js";

/**
 * `--max-bandwidth` on a real crawl of the test web, which serves far faster than the bound: the
 * agent's downloads, each spread over its duration, stay under the bound over every second but for one
 * page, and use most of it; the same crawl unbounded goes several times faster; nothing is lost.
 */

const KB = 1024;
/** Low enough that the test web, even on a loaded machine, serves faster. */
const BOUND = 1024 * KB;

let fixture: WebFixture;
beforeAll(async () => {
  fixture = await startWebFixture({ seed: 5, hosts: 10, pages: 400 });
});
afterAll(async () => {
  await fixture?.stop();
});

interface Download {
  readonly startMs: number;
  readonly endMs: number;
  readonly bytes: number;
}

function downloadsOf(entries: readonly CrawlLogEntry[]): Download[] {
  return entries
    .filter((e) => e.status > 0)
    .map((e) => {
      const startMs = Date.parse(e.ts);
      return { startMs, endMs: startMs + Math.max(1, e.durationMs), bytes: e.bytes };
    });
}

async function crawl(id: string, flags: string[]) {
  const result = await spawnAgent(fixture, { id, flags }).waitForExit(120_000);
  expect(result.code, result.stderr).toBe(0);
  const entries = await readCrawlLogOf(`${fixture.dir}/data-${id}`);
  const downloads = downloadsOf(entries);
  const start = Math.min(...downloads.map((d) => d.startMs));
  const end = Math.max(...downloads.map((d) => d.endMs));
  const bytes = downloads.reduce((sum, d) => sum + d.bytes, 0);
  return { entries, downloads, start, end, bytes, rate: (bytes * 1000) / (end - start) };
}

describe("--max-bandwidth", () => {
  it("holds the crawl's downloads under the bound, within one page over any second, and uses most of it", async () => {
    const free = await crawl("free", []);
    const bounded = await crawl("bounded", ["--max-bandwidth", "1MB/s"]);
    // The web is fast enough for the bound to bind (2.2 MB/s at the slowest seen, on a machine loaded
    // by two suites at once).
    expect(free.rate).toBeGreaterThan(1.5 * BOUND);
    // The same pages, none lost to the bound.
    const urls = (entries: readonly CrawlLogEntry[]) => entries.map((e) => e.url).sort();
    expect(urls(bounded.entries)).toEqual(urls(free.entries));
    expect(bounded.entries.length).toBeGreaterThan(300);
    const largestPage = Math.max(...bounded.downloads.map((d) => d.bytes));
    for (let from = bounded.start; from + 1000 <= bounded.end; from += 50) {
      expect(bytesWithin(bounded.downloads, from, from + 1000)).toBeLessThanOrEqual(BOUND + largestPage);
    }
    expect(bounded.rate).toBeLessThanOrEqual(BOUND * 1.05);
    expect(bounded.rate).toBeGreaterThan(0.75 * BOUND);
  });

  it("shows on /metrics the downloads the bound holds back", async () => {
    const agent = spawnAgent(fixture, {
      id: "metered",
      flags: ["--max-bandwidth", "20KB/s", "--max-active-hosts", "8", ...HTTP_FLAGS],
    });
    try {
      let base = "";
      await waitFor(() => {
        base = String(logEvent(agent.stderr(), "console")?.url ?? "").replace(/\/$/, "");
        return base !== "";
      }, "the agent's console");
      // 8 hosts ready at 20 KB/s: most of their downloads wait for their share.
      await waitFor(
        async () => familyTotal(await scrape(base), "ubicrawl_fetches_waiting_for_bandwidth") >= 2,
        "downloads waiting for bandwidth on /metrics",
      );
    } finally {
      agent.kill("SIGKILL");
      await agent.waitForExit(20_000);
    }
  });

  it("refuses a rate it cannot read, saying what it wants", async () => {
    const result = await spawnAgent(fixture, { id: "bad", flags: ["--max-bandwidth", "fast"] }).waitForExit(
      30_000,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--max-bandwidth must be a positive rate such as 5MB/s, 512k, 2MiB, 10Mbit/s or 250000 (bytes per second), got "fast"',
    );
    // A bare 5 is 5 bytes per second: refused, naming the unit, rather than crawling a page an hour.
    const tiny = await spawnAgent(fixture, { id: "tiny", flags: ["--max-bandwidth", "5"] }).waitForExit(
      30_000,
    );
    expect(tiny.code).toBe(2);
    expect(tiny.stderr).toContain(
      '--max-bandwidth must be at least 1KB/s (1,024 bytes per second), got "5": 5 bytes per second, since a number without a unit counts bytes per second; write the unit, e.g. 5KB/s or 5MB/s',
    );
  });
});
