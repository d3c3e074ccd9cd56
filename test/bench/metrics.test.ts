import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  estimateSeenUrls,
  measureCrawlLogs,
  parseAgentSummary,
  readTruth,
} from "../../bench/lib/crawl-metrics.mjs";
import { interHostLinks } from "../../bench/lib/link-share.mjs";
import { crawlLogFetchedUrls, fetchFigures } from "../../bench/lib/measure.mjs";
import { fixed, formatTable, median, medianRecord, percent } from "../../bench/lib/report.mjs";
import { seenSetMemory } from "../../bench/lib/seen-memory.mjs";
import { AGENT_DEFAULTS } from "../../src/agent/agent-options.js";
import { SeenSet } from "../../src/frontier/index.js";
import { buildModel, computeTruth } from "../../src/testweb/index.js";
import { normalizeUrl } from "../../src/url/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-bench-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const line = (url: string, status: number, bytes: number, ts = "2026-01-01T00:00:00.000Z") =>
  JSON.stringify({ ts, url, status, bytes, contentType: "text/html", links: 0, durationMs: 1, depth: 0 });

describe("measureCrawlLogs", () => {
  it("measures coverage and overlap of the union of logs against the truth", async () => {
    const truth = new Set(["http://a/1", "http://a/2", "http://b/1", "http://b/2"]);
    await writeFile(
      join(dir, "one.log"),
      `${[
        line("http://a/1", 200, 100, "2026-01-01T00:00:00.000Z"),
        line("http://a/2", 404, 10),
        line("http://x/9", 200, 5),
        line("http://b/2", 0, 0),
      ].join("\n")}\n`,
    );
    await writeFile(
      join(dir, "two.log"),
      [line("http://a/1", 200, 100), line("http://b/1", 301, 0, "2026-01-01T00:00:02.500Z")].join("\n") +
        "\n",
    );
    const metrics = await measureCrawlLogs(
      [join(dir, "one.log"), join(dir, "two.log"), join(dir, "none.log")],
      truth,
    );
    expect(metrics.entries).toBe(6);
    expect(metrics.fetches).toBe(5);
    expect(metrics.failures).toBe(1);
    expect(metrics.unique).toBe(4);
    expect(metrics.loggedUrls).toBe(5);
    expect(metrics.bytes).toBe(215);
    // http://b/2 only failed: not covered.
    expect(metrics.covered).toBe(3);
    expect(metrics.coverage).toBe(0.75);
    expect(metrics.extra).toBe(1);
    expect(metrics.overlap).toBe(0.25);
    expect(metrics.spanSeconds).toBe(2.5);
    expect(metrics.lastEntryEpochMs).toBe(Date.parse("2026-01-01T00:00:02.500Z"));
    // Every answered fetch's time, in order across the logs; the failure is not a page.
    const at = (iso: string) => Date.parse(iso);
    expect(metrics.pageTimesMs).toEqual([
      ...Array(4).fill(at("2026-01-01T00:00:00.000Z")),
      at("2026-01-01T00:00:02.500Z"),
    ]);
  });

  it("reads the truth file written by ubicrawl testweb", async () => {
    await writeFile(join(dir, "truth"), "http://a/1\nhttp://a/2\n\n");
    expect([...(await readTruth(join(dir, "truth")))]).toEqual(["http://a/1", "http://a/2"]);
  });
});

describe("parseAgentSummary", () => {
  const stopped = {
    level: "info",
    time: "2026-11-27T07:00:00.000Z",
    agent: "a1",
    event: "stopped",
    reason: "done",
    seconds: 36,
    pagesFetchedThisRun: 20954,
    pagesFetched: 20954,
    seenUrls: 21121,
    seenSetBytes: 262144,
    dropped: { nofollow: 14774, robots: 137, depth: 6, abandoned: 26 },
    msg: "stopped (done) after 36.0 s: 20954 pages",
  };
  const progress = JSON.stringify({
    level: "info",
    time: "t",
    event: "progress",
    pagesFetched: 5,
    msg: "[a1] 5 pages",
  });

  it("reads the run time, pages, drops and seen set of the stopped record", () => {
    const summary = parseAgentSummary([progress, "not a record", JSON.stringify(stopped)]);
    expect(summary.seconds).toBe(36);
    expect(summary.pagesFetched).toBe(20954);
    expect(summary.dropped).toEqual({ nofollow: 14774, robots: 137, depth: 6, abandoned: 26 });
    expect(summary.seenUrls).toBe(21121);
    expect(summary.seenSetBytes).toBe(262144);
    expect(summary.exchange).toBeUndefined();
  });

  it("reads the URL exchange of a cluster agent, and nothing of an agent that did not stop", () => {
    const exchange = { urlsSent: 3077, batchesSent: 41, urlsReceived: 2950, batchesReceived: 39 };
    const summary = parseAgentSummary([JSON.stringify({ ...stopped, exchange, linksToOtherAgents: 9120 })]);
    expect(summary.exchange).toEqual(exchange);
    expect(summary.linksToOtherAgents).toBe(9120);
    // Message counts: 0 when the record leaves them out (an agent alone), else as written.
    expect([summary.digestMessages, summary.ipMessages]).toEqual([0, 0]);
    const counted = parseAgentSummary([JSON.stringify({ ...stopped, digestMessages: 812, ipMessages: 77 })]);
    expect([counted.digestMessages, counted.ipMessages]).toEqual([812, 77]);
    expect(parseAgentSummary([progress]).pagesFetched).toBeUndefined();
  });

  it("estimates the seen set from logged URLs plus URLs dropped after queueing only", () => {
    // nofollow and depth drops happen before the seen set; robots and abandoned after it.
    expect(estimateSeenUrls(1000, { nofollow: 500, depth: 7, robots: 20, abandoned: 3 })).toBe(1023);
  });
});

describe("fetchFigures and crawlLogFetchedUrls", () => {
  it("measure a comparison crawler's fetches after normalization, repeats counted as pages", async () => {
    const path = join(dir, "crawl.log");
    await writeFile(
      path,
      [
        line("http://a.test/", 200, 10),
        line("http://a.test/gone", 404, 0),
        line("http://a.test/down", 0, 0),
        line("http://a.test/x", 200, 10),
      ].join("\n"),
    );
    const urls = crawlLogFetchedUrls(path);
    expect(urls).toEqual(["http://a.test/", "http://a.test/gone", "http://a.test/x"]);

    const truth = new Set(["http://a.test/", "http://a.test/gone", "http://a.test/y"]);
    const fetched = [...urls, "HTTP://A.TEST/", "http://b.test/other"];
    const figures = fetchFigures({ wallSeconds: 2, cpuSeconds: 0.5 }, fetched, truth, normalizeUrl);
    expect(figures.pages).toBe(5);
    expect(figures.pagesPerSecond).toBe(2.5);
    expect(figures.cpuSecondsPer1000Pages).toBe(100);
    expect(figures.cpuCores).toBe(0.25);
    expect(figures.distinctUrls).toBe(4); // the upper-case spelling is the same page
    expect(figures.coverage).toBeCloseTo(2 / 3, 10);
    expect(figures.extraUrls).toBe(2); // /x and b.test are not in the truth
  });
});

describe("seenSetMemory", () => {
  it("matches a real SeenSet holding as many fingerprints", () => {
    const reference = new SeenSet();
    for (let i = 1; i <= 5000; i++) reference.addParts(i, i * 7);
    const memory = seenSetMemory(5000);
    expect(memory.urls).toBe(5000);
    // The set's segments grow apart, each by the fingerprints that fall in it: two fills of the same
    // size differ by at most a few segments' growth steps.
    expect(Math.abs(memory.bytes - reference.memoryBytes)).toBeLessThan(reference.memoryBytes * 0.05);
    // Each segment's load stays in [0.68, 0.85] with 8-byte slots.
    expect(memory.bytesPerUrl).toBeGreaterThanOrEqual(9.4);
    expect(memory.bytesPerUrl).toBeLessThanOrEqual(12);
  });
});

describe("interHostLinks", () => {
  it("counts the followed and inter-host links of the truth's pages", () => {
    const web = { seed: 3, hosts: 12, pages: 600 };
    const model = buildModel(web);
    const truth = computeTruth(model, 8080, {
      maxDepth: AGENT_DEFAULTS.maxDepth,
      maxPagesPerHost: AGENT_DEFAULTS.maxPagesPerHost,
      userAgent: AGENT_DEFAULTS.userAgent,
    }).urls;
    const links = interHostLinks(web, truth);
    expect(links.pages).toBe(truth.length);
    // Every fetched home page links to its two ring partners on other hosts.
    const homes = truth.filter((url) => new URL(url).pathname === "/" && !url.includes("calendar")).length;
    expect(links.interHostLinks).toBeGreaterThanOrEqual(2 * homes);
    expect(links.followedLinks).toBeGreaterThan(links.interHostLinks);
    expect(links.interHostShare).toBeCloseTo(links.interHostLinks / links.followedLinks, 12);
    expect(links.interHostLinksPerPage).toBeCloseTo(links.interHostLinks / truth.length, 12);
    // An empty crawl routes nothing.
    expect(interHostLinks(web, []).followedLinks).toBe(0);
  });
});

describe("report helpers", () => {
  it("takes medians of values and of records", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
    expect(
      medianRecord([
        { run: "a", x: 1 },
        { run: "b", x: 9 },
        { run: "c", x: 5 },
      ]),
    ).toEqual({ run: "a", x: 5 });
  });

  it("aligns a table and formats numbers", () => {
    const table = formatTable(
      ["name", "value"],
      [
        ["pages/s", "703"],
        ["overlap", "0.00%"],
      ],
    );
    expect(table.split("\n")).toEqual([
      "name     value",
      "-------  -----",
      "pages/s    703",
      "overlap  0.00%",
    ]);
    expect(fixed(1.234, 1)).toBe("1.2");
    expect(fixed(Number.NaN, 1)).toBe("n/a");
    expect(percent(0.5)).toBe("50.00%");
  });
});
