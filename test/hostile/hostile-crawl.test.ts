import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { CHARSET_PAGES } from "../../src/testweb/hostile/index.js";
import { controlPaths, type RunningHostileWeb, startHostileWeb } from "../../src/testweb/index.js";
import { type ExitResult, killAllUbicrawl, logEvent, readCrawlLogOf, runUbicrawl } from "../agent/harness.js";

/**
 * One real agent crawls the whole hostile web with moderate timeouts; every check reads that crawl:
 * it ends, the control host is crawled in full, each hostile behaviour ends under a clear error class,
 * memory stays bounded and no host ever sees two requests at once.
 */

// Moderate, yet with room for a busy machine: a 10 MiB body must arrive well within it, while the agent
// itself spends CPU time parsing 10 MB pages next to it.
const FETCH_TIMEOUT_MS = 5000;
const MAX_PAGES_PER_HOST = 100;
const EXIT_BOUND_MS = 50_000;
const PEAK_RSS_BOUND_BYTES = 400 * 1024 * 1024;

let web: RunningHostileWeb;
let dir: string;
let run: ExitResult;
let elapsedMs: number;
let peakRssBytes = 0;
let log: CrawlLogEntry[];

/** Peak resident set size of `pid` so far (VmHWM), bytes; 0 once the process is gone. */
async function peakRss(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  web = await startHostileWeb();
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-hostile-"));
  const hostsFile = join(dir, "hosts");
  const seedsFile = join(dir, "seeds");
  await web.writeHostsFile(hostsFile);
  await writeFile(seedsFile, `${web.seeds.join("\n")}\n`);
  const dataDir = join(dir, "data");
  const startedAt = performance.now();
  const agent = runUbicrawl(
    [
      "agent",
      "--id",
      "hostile",
      "--data",
      dataDir,
      "--seeds",
      seedsFile,
      "--hosts-file",
      hostsFile,
      "--allow-net",
      "127.0.0.0/8",
      "--exit-when-done",
      "--progress",
      "off",
      "--delay-ms",
      "0",
      "--fetch-timeout-ms",
      String(FETCH_TIMEOUT_MS),
      "--robots-retry-ms",
      "100",
      "--max-robots-attempts",
      "2",
      "--fetch-retry-ms",
      "200",
      "--max-pages-per-host",
      String(MAX_PAGES_PER_HOST),
      // The hostile hosts answer every path alike: a /sitemap.xml would be one more of each failure
      // counted below, page by page.
      "--sitemaps",
      "listed",
    ],
    { cwd: dir },
  );
  const sampler = setInterval(() => {
    void peakRss(agent.pid).then((bytes) => {
      peakRssBytes = Math.max(peakRssBytes, bytes);
    });
  }, 100);
  try {
    run = await agent.waitForExit(EXIT_BOUND_MS);
  } finally {
    clearInterval(sampler);
  }
  elapsedMs = performance.now() - startedAt;
  log = await readCrawlLogOf(dataDir);
  process.stderr.write(
    `hostile crawl: ${(elapsedMs / 1000).toFixed(1)} s, peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MB, ${log.length} log lines\n`,
  );
}, 90_000);

afterAll(async () => {
  await killAllUbicrawl();
  await web?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The crawl-log lines of the host labelled `label`. */
function logOf(label: string): CrawlLogEntry[] {
  const name = web.host(label).name;
  return log.filter((entry) => new URL(entry.url).hostname === name);
}

/** The one crawl-log line of `path` on host `label` (attempts to be retried aside: the last one). */
function entryOf(label: string, path: string): CrawlLogEntry | undefined {
  const url = web.url(label, path);
  const entries = log.filter((entry) => entry.url === url && entry.willRetry !== true);
  expect(entries.length, url).toBeLessThanOrEqual(1);
  return entries[0];
}

/** How many times the hostile web served `path` of host `label`. */
function served(label: string, path: string): number {
  return web.traffic.servedCounts().get(web.url(label, path)) ?? 0;
}

/** The error counts of the agent's `stopped` record. */
function summaryErrors(): Map<string, number> {
  return new Map(Object.entries((logEvent(run.stderr, "stopped")?.errors ?? {}) as Record<string, number>));
}

describe("an agent crawling the hostile web", () => {
  it("finishes on its own, exit 0, within a bounded time", () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain("stopped (done)");
    expect(elapsedMs).toBeLessThan(EXIT_BOUND_MS);
  });

  it("keeps its peak RSS bounded", () => {
    expect(peakRssBytes).toBeGreaterThan(0);
    expect(peakRssBytes).toBeLessThan(PEAK_RSS_BOUND_BYTES);
  });

  it("never has two requests in flight to one host", () => {
    expect(web.traffic.overlaps).toEqual([]);
  });

  it("fetches every page of the control host once, while the hostile hosts are still stalling", () => {
    for (const path of controlPaths(web.options.controlPages)) {
      expect(entryOf("control", path), path).toMatchObject({ status: 200 });
      expect(served("control", path), path).toBe(1);
    }
    // The crawl goes on at full speed: the control host is done before the slowest hostile request ends.
    const controlName = web.host("control").name;
    const lastControl = Math.max(
      ...web.traffic.requests.filter((r) => r.host === controlName).map((r) => r.beganAtMs),
    );
    const slowestEnd = Math.max(...web.traffic.requests.map((r) => r.endedAtMs ?? Number.POSITIVE_INFINITY));
    expect(lastControl).toBeLessThan(slowestEnd);
  });

  it("logs every failed fetch with a UbiError code, and every fetch with a status or a code", () => {
    for (const entry of log) {
      if (entry.status === 0) expect(entry.error, entry.url).toMatch(/^UBI_ERR_/);
      else expect(entry.status, entry.url).toBeGreaterThanOrEqual(200);
    }
  });

  it("ends slow servers with timeouts: headers (slowloris) and body (drip)", () => {
    expect(entryOf("slow-headers", "/")).toMatchObject({ status: 0, error: ErrorCode.HeadersTimeout });
    // No answer in time may pass: the slowloris host was tried --max-fetch-attempts times in all.
    const attempts = log.filter((entry) => entry.url === web.url("slow-headers", "/"));
    expect(attempts.map((entry) => entry.willRetry ?? false)).toEqual([true, true, false]);
    expect(served("slow-headers", "/")).toBe(3);
    expect(entryOf("drip-body", "/")).toMatchObject({ status: 0, error: ErrorCode.BodyTimeout });
    for (const label of ["slow-headers", "drip-body"]) {
      expect(entryOf(label, "/")?.durationMs).toBeLessThan(FETCH_TIMEOUT_MS + 2000);
    }
  });

  it("cuts endless, 1 GB and gzip-bomb bodies at the cap, archives the prefix and logs BodyTooLarge", () => {
    for (const label of ["endless-body", "huge-body", "gzip-bomb"]) {
      expect(entryOf(label, "/"), label).toMatchObject({
        status: 200,
        error: ErrorCode.BodyTooLarge,
        truncated: true,
      });
      expect(served(label, "/"), label).toBe(1);
    }
    // The client stopped reading: far less than the 1 GB on the wire.
    expect(entryOf("huge-body", "/")?.bytes).toBeLessThan(64 * 2 ** 20);
  });

  it("reads the declared length of a short Content-Length, fails a long one or a reset as ProtocolError", () => {
    expect(entryOf("short-length", "/")).toMatchObject({ status: 200, bytes: 64 });
    expect(entryOf("long-length", "/")).toMatchObject({ status: 0, error: ErrorCode.ProtocolError });
    expect(entryOf("reset-mid-body", "/")).toMatchObject({ status: 0, error: ErrorCode.ProtocolError });
  });

  it("reads HTTP/1.0 bodies delimited by the close and follows their links", () => {
    expect(entryOf("http10", "/")).toMatchObject({ status: 200, links: 1 });
    expect(entryOf("http10", "/second")).toMatchObject({ status: 200 });
  });

  it("logs every malformed response as ProtocolError", () => {
    const entries = logOf("malformed");
    expect(entries.map((entry) => new URL(entry.url).pathname).sort()).toEqual(
      web
        .host("malformed")
        .entryUrls.map((url) => new URL(url).pathname)
        .sort(),
    );
    for (const entry of entries)
      expect(entry, entry.url).toMatchObject({ status: 0, error: ErrorCode.ProtocolError });
  });

  it("fetches each URL of a redirect loop once, and follows a 20-hop chain to its end", () => {
    for (const path of ["/loop/a", "/loop/b", "/self"]) {
      expect(entryOf("redirect-loop", path), path).toMatchObject({ status: 302 });
      expect(served("redirect-loop", path), path).toBe(1);
    }
    const hops = web.options.redirectChainHops;
    for (let hop = 0; hop < hops; hop++) {
      expect(entryOf("redirect-chain", `/chain/${hop}`), `hop ${hop}`).toMatchObject({ status: 301 });
    }
    expect(entryOf("redirect-chain", `/chain/${hops}`)).toMatchObject({ status: 200 });
  });

  it("decodes invalid UTF-8 and odd charsets and follows their non-ASCII links", () => {
    for (const page of CHARSET_PAGES) {
      expect(entryOf("charsets", page.path), page.path).toMatchObject({ status: 200, links: 1 });
      expect(entryOf("charsets", page.expectedLink), page.expectedLink).toMatchObject({ status: 200 });
    }
  });

  it("parses pathological HTML: links after a 10 MB attribute, 100,000-deep nesting, unclosed tags", () => {
    for (const path of [
      "/reached/after-attribute",
      "/reached/deep",
      "/reached/unclosed-1",
      "/reached/unclosed-3",
    ]) {
      expect(entryOf("pathological-html", path), path).toMatchObject({ status: 200 });
    }
    expect(served("pathological-html", "/reached/never")).toBe(0);
    // 100,000 links: the page's links are capped, and the host's pages too.
    expect(entryOf("pathological-html", "/many-links")?.links).toBe(10_000);
    expect(logOf("pathological-html").length).toBe(MAX_PAGES_PER_HOST);
  });

  it("stops infinite URL spaces (session ids, calendar) at the per-host page cap", () => {
    for (const label of ["session-ids", "calendar"]) {
      expect(logOf(label).length, label).toBe(MAX_PAGES_PER_HOST);
      expect(web.traffic.urlsOf(web.host(label).name).length, label).toBe(MAX_PAGES_PER_HOST + 1);
    }
  });

  it("applies the first 500 KiB of a 10 MB robots.txt and the valid group of a binary one", () => {
    expect(served("robots-huge", "/robots.txt")).toBe(1);
    expect(served("robots-huge", "/private/secret")).toBe(0);
    expect(entryOf("robots-huge", "/late/page")).toMatchObject({ status: 200 });
    expect(entryOf("robots-huge", "/open")).toMatchObject({ status: 200 });
    expect(served("robots-binary", "/blocked/page")).toBe(0);
    expect(entryOf("robots-binary", "/open")).toMatchObject({ status: 200 });
  });

  it("gives up hosts whose robots.txt times out or answers 5xx, without fetching their pages", () => {
    for (const label of ["robots-timeout", "robots-5xx"]) {
      const urls = web.traffic.urlsOf(web.host(label).name);
      expect(urls, label).toEqual([web.url(label, "/robots.txt"), web.url(label, "/robots.txt")]);
      expect(logOf(label), label).toEqual([]);
    }
  });

  it("does not parse HTML served as an image, and survives binary served as HTML", () => {
    expect(entryOf("wrong-types", "/html-as-png")).toMatchObject({
      status: 200,
      contentType: "image/png",
      links: 0,
    });
    expect(entryOf("wrong-types", "/binary-as-html")).toMatchObject({
      status: 200,
      contentType: "text/html",
    });
    expect(served("wrong-types", "/never-followed")).toBe(0);
  });

  it("counts each failure under its error class in the stats, as in the crawl log", () => {
    const errors = summaryErrors();
    const logged = new Map<string, number>();
    for (const entry of log) {
      if (entry.willRetry === true) continue;
      if (entry.error !== undefined) logged.set(entry.error, (logged.get(entry.error) ?? 0) + 1);
      else if (entry.status >= 400) {
        const httpClass = `http_${Math.floor(entry.status / 100)}xx`;
        logged.set(httpClass, (logged.get(httpClass) ?? 0) + 1);
      }
    }
    expect(logged.get(ErrorCode.HeadersTimeout)).toBeGreaterThanOrEqual(1);
    expect(logged.get(ErrorCode.BodyTimeout)).toBeGreaterThanOrEqual(1);
    expect(logged.get(ErrorCode.BodyTooLarge)).toBe(3);
    expect(logged.get(ErrorCode.ProtocolError)).toBe(2 + web.host("malformed").entryUrls.length);
    // robots.txt failures are not fetches of pages: the stats count the hosts given up.
    expect(Object.fromEntries(errors)).toEqual({ ...Object.fromEntries(logged), robots_unavailable: 2 });
  });
});
