import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { PageArchive } from "../../src/agent/page-archive.js";
import type { DuplicateDetector } from "../../src/dedup/index.js";
import type { FetchResult } from "../../src/fetching/index.js";
import type { PayloadOriginal } from "../../src/storage/index.js";
import { CrawlLog, WarcWriter } from "../../src/storage/index.js";

/**
 * A page whose payload this agent claimed (the first copy seen in the cluster): once durable it tells
 * the digest's owner where the response is; when it is not done after all, it gives the claim back, so
 * another copy does not wait for the claim's lease (a full disk once held a mirror's page 30 s so).
 */
let dir: string;
let warc: WarcWriter;
let crawlLog: CrawlLog;
/** What the fake detector was told: owner, digest, original (undefined: the claim given back). */
let settled: [string, string, PayloadOriginal | undefined][];
let archive: PageArchive;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-archive-claims-"));
  warc = new WarcWriter({ dir: join(dir, "warc"), agentId: "a1" });
  await warc.open();
  crawlLog = new CrawlLog({ dir });
  await crawlLog.open();
  settled = [];
  const duplicates = {
    check: async () => ({ kind: "claimed", owner: "agent-2" }),
    settle: async (owner: string, digest: string, original: PayloadOriginal | undefined) => {
      settled.push([owner, digest, original]);
    },
  } as unknown as DuplicateDetector;
  archive = new PageArchive(warc, crawlLog, duplicates);
});

afterEach(async () => {
  await warc.close();
  await crawlLog.close();
  await rm(dir, { recursive: true, force: true });
});

function fetched(body: string): FetchResult {
  const bytes = Buffer.from(body);
  return {
    url: "http://a.test/page.html",
    ip: "127.1.0.1",
    status: 200,
    statusText: "OK",
    httpVersion: "1.1",
    requestTarget: "/page.html",
    requestHeaders: [["host", "a.test"]],
    responseHeaders: [["Content-Type", "text/html"]],
    contentType: "text/html",
    rawBody: bytes,
    body: bytes,
    wireBytes: bytes.byteLength,
    truncated: false,
    startedAtMs: 1_000,
    durationMs: 3,
  };
}

it("tells the digest's owner where the response is once the page is durable", async () => {
  const archived = await archive.store(fetched("<p>one</p>"), new AbortController().signal);
  await archived.settle();
  expect(settled).toHaveLength(1);
  expect(settled[0]?.[0]).toBe("agent-2");
  expect(settled[0]?.[2]?.url).toBe("http://a.test/page.html");
});

it("gives the claim back when the page is not done after all", async () => {
  const archived = await archive.store(fetched("<p>one</p>"), new AbortController().signal);
  await archived.abandon();
  expect(settled).toEqual([["agent-2", archived.capture?.digest, undefined]]);
});
