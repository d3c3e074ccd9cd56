import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pageLogEntry } from "../../src/agent/crawl-log-entries.js";
import { fetchesLoggedFrom } from "../../src/agent/lost-pages.js";
import type { FetchResult } from "../../src/fetching/index.js";
import { CrawlLog } from "../../src/storage/index.js";

/**
 * A page's sitemap traits go into its crawl log line and come back from it when the page is queued
 * again because its WARC record was lost (lost-pages.ts reads the log): the lastmod and the changefreq
 * a sitemap gave it, a changefreq of no known value left out.
 */

function answer(url: string): FetchResult {
  return {
    url,
    ip: "127.0.0.1",
    status: 200,
    statusText: "OK",
    httpVersion: "1.1",
    requestTarget: new URL(url).pathname,
    requestHeaders: [],
    responseHeaders: [],
    contentType: "text/html",
    rawBody: Buffer.from("<p>a</p>"),
    body: Buffer.from("<p>a</p>"),
    wireBytes: 8,
    truncated: false,
    startedAtMs: Date.UTC(2026, 10, 28),
    durationMs: 5,
  };
}

describe("a page's sitemap traits in the crawl log", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-log-traits-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("are logged with the page and read back as its traits", async () => {
    const log = new CrawlLog({ dir });
    await log.open();
    const hinted = { url: "http://a.test/h", depth: 1, lastmod: "2026-11-01", changefreq: "hourly" as const };
    log.append(pageLogEntry(hinted, answer(hinted.url), 0));
    expect(pageLogEntry(hinted, answer(hinted.url), 0)).toMatchObject({
      lastmod: "2026-11-01",
      changefreq: "hourly",
    });
    log.append(pageLogEntry({ url: "http://a.test/plain", depth: 2 }, answer("http://a.test/plain"), 0));
    // A line edited by hand, or written by a later version with a value this one does not know.
    log.append({
      ...pageLogEntry({ url: "http://a.test/odd", depth: 1 }, answer("http://a.test/odd"), 0),
      changefreq: "fortnightly",
    });
    await log.close();
    const fetches = await fetchesLoggedFrom(log.path, 0);
    expect(fetches.get(hinted.url)).toEqual({
      depth: 1,
      traits: { lastmod: "2026-11-01", changefreq: "hourly" },
    });
    expect(fetches.get("http://a.test/plain")).toEqual({ depth: 2, traits: {} });
    expect(fetches.get("http://a.test/odd")).toEqual({ depth: 1, traits: {} });
  });
});
