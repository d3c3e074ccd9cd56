import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requestTimesByHost } from "../../bench/lib/crawl-metrics.mjs";
import { biggestHost, crawlTail, hostAlone, nearestRank } from "../../bench/lib/crawl-tail.mjs";

describe("crawlTail", () => {
  it("runs from the page that makes 90% of the pages to the last, as a share of the wall time", () => {
    // 20 pages: the 18th (index 17) makes 90%.
    const times = Array.from({ length: 20 }, (_, i) => 1000 + i * 100);
    times[19] = 5000;
    const tail = crawlTail(times, 0, 10_000);
    expect(tail.fromSeconds).toBe(2.7);
    expect(tail.seconds).toBeCloseTo(2.3, 9);
    expect(tail.shareOfCrawl).toBeCloseTo(0.23, 9);
    // One page: the tail is empty.
    expect(crawlTail([500], 0, 1000)).toEqual({ fromSeconds: 0.5, seconds: 0, shareOfCrawl: 0 });
    expect(Number.isNaN(crawlTail([], 0, 1000).seconds)).toBe(true);
  });
});

describe("hostAlone", () => {
  it("measures a host's requests after the last request to any other host", () => {
    const times = new Map([
      ["big", [0, 10, 20, 100, 101, 103, 106, 110, 130]],
      ["a", [5, 50]],
      ["b", [15, 102]],
    ]);
    const alone = hostAlone(times, "big");
    // After b's last request at 102: 103, 106, 110, 130; gaps 3, 4, 20.
    expect(alone).toEqual({ requests: 4, seconds: 0.028, gaps: 3, medianGapMs: 4, p90GapMs: 20 });
    // A host that never had the crawl to itself.
    expect(hostAlone(times, "a")).toMatchObject({ requests: 0, seconds: 0, gaps: 0 });
    expect(Number.isNaN(hostAlone(times, "a").medianGapMs)).toBe(true);
    // The only host: alone from its first request.
    expect(hostAlone(new Map([["x", [0, 2, 4]]]), "x")).toEqual({
      requests: 3,
      seconds: 0.004,
      gaps: 2,
      medianGapMs: 2,
      p90GapMs: 2,
    });
  });

  it("takes percentiles by nearest rank", () => {
    expect(nearestRank([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.9)).toBe(9);
    expect(nearestRank([7], 0.9)).toBe(7);
    expect(Number.isNaN(nearestRank([], 0.5))).toBe(true);
  });
});

describe("biggestHost", () => {
  it("names the host with the most URLs and its share", () => {
    const urls = ["http://a/1", "http://b:8080/1", "http://b:8080/2", "http://c/1", "http://b:8080/3"];
    expect(biggestHost(urls)).toEqual({ host: "b", urls: 3, share: 0.6 });
    // A tie goes to the first name.
    expect(biggestHost(["http://z/1", "http://y/1"]).host).toBe("y");
  });
});

describe("requestTimesByHost", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-bench-test-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lists each host's answered requests in time order over several logs, and the hosts that only failed", async () => {
    const line = (url: string, status: number, ts: string) =>
      JSON.stringify({
        ts,
        url,
        status,
        bytes: 1,
        contentType: "text/html",
        links: 0,
        durationMs: 1,
        depth: 0,
      });
    await writeFile(
      join(dir, "one.log"),
      `${[
        line("http://h1.test:80/b", 200, "2026-01-01T00:00:00.020Z"),
        line("http://gone.test:80/", 0, "2026-01-01T00:00:00.030Z"),
        line("http://h2.test:80/a", 0, "2026-01-01T00:00:00.040Z"),
      ].join("\n")}\n`,
    );
    await writeFile(
      join(dir, "two.log"),
      `${[
        line("http://h1.test:80/a", 404, "2026-01-01T00:00:00.010Z"),
        line("http://h2.test:80/b", 301, "2026-01-01T00:00:00.050Z"),
      ].join("\n")}\n`,
    );
    const { answered, failedHosts } = await requestTimesByHost([
      join(dir, "one.log"),
      join(dir, "two.log"),
      join(dir, "missing.log"),
    ]);
    const t0 = Date.parse("2026-01-01T00:00:00.000Z");
    expect(answered.get("h1.test")).toEqual([t0 + 10, t0 + 20]);
    expect(answered.get("h2.test")).toEqual([t0 + 50]);
    expect(failedHosts).toEqual(["gone.test"]);
  });
});
