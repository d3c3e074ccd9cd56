import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { isChanging, type PageChanges } from "../../src/testweb/index.js";
import {
  agentDataDir,
  errorLine,
  readCrawlLogOf,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "../agent/harness.js";

/**
 * A real agent process with `--recrawl adaptive` over a test web whose changing pages change twice a
 * second (Poisson processes: a revisit a second finds them changed 86% of the time) and whose other
 * pages never do: once their histories are long enough, the estimator sends the pages that never
 * change to --recrawl-max, and a budget ample for the changing ones keeps them at --recrawl-min.
 * (Not changes every 0.5 s on the dot: aligned with the dates' whole seconds, those are a second
 * after their date on average rather than half of one, and look four times faster than they are.)
 */
const CHANGES: PageChanges = { everyMs: 500, percent: 40, process: "poisson", spread: 1 };
const AGENT = { id: "adaptive" };
const MIN_MS = 1000;
const MAX_MS = 4000;
/** How much later than its fetch's start a crawl log line may be written, at most, as checked here. */
const LOG_LAG_MS = 500;

describe("--recrawl adaptive over a changing web", () => {
  let fixture: WebFixture;
  let exit: { code: number | null; stderr: string };

  beforeAll(async () => {
    fixture = await startWebFixture({
      hosts: 5,
      pages: 60,
      seedCount: 1,
      mirrors: 0,
      trap: false,
      changes: CHANGES,
    });
    const agent = spawnAgent(fixture, {
      ...AGENT,
      flags: [
        "--recrawl=adaptive",
        "--recrawl-min=1s",
        "--recrawl-max=4s",
        "--recrawl-budget=100",
        "--recrawl-horizon=24s",
        "--sitemaps=off",
      ],
    });
    exit = await agent.waitForExit(60_000);
  }, 90_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  it("gives pages that never change the longest interval and pages changing at every visit the shortest", async () => {
    expect(exit.code, errorLine(exit.stderr)).toBe(0);
    const log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    const first = new Map<string, CrawlLogEntry>();
    const lastPlanned = new Map<string, CrawlLogEntry>();
    for (const entry of log) {
      if (entry.visits === 1) first.set(entry.url, entry);
      if (typeof entry.nextFetch === "string") lastPlanned.set(entry.url, entry);
    }
    const intervals = { changing: [] as number[], still: [] as number[] };
    for (const [url, entry] of lastPlanned) {
      const head = first.get(url);
      // Only 200 HTML pages change; error pages have no payload to compare.
      if (head?.status !== 200 || (entry.visits as number) < 4) continue;
      const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
      const changing = head.contentType === "text/html" && isChanging(CHANGES, path);
      const interval = Date.parse(entry.nextFetch as string) - Date.parse(entry.ts);
      (changing ? intervals.changing : intervals.still).push(interval);
    }
    expect(intervals.changing.length).toBeGreaterThan(0);
    expect(intervals.still.length).toBeGreaterThan(0);
    // A page's plan counts from its fetch's start, its log line's time is when it was written: later,
    // by the fetch and its commit (372 ms once, with the whole suite running beside).
    for (const interval of intervals.changing) {
      expect(interval).toBeLessThanOrEqual(MIN_MS);
      expect(interval).toBeGreaterThan(MIN_MS - LOG_LAG_MS);
    }
    for (const interval of intervals.still) {
      expect(interval).toBeLessThanOrEqual(MAX_MS);
      expect(interval).toBeGreaterThan(MAX_MS - LOG_LAG_MS);
    }
  });
});
