import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSYNCED_PAGES_PER_HOST } from "../../src/agent/index.js";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import type { Truth } from "../../src/testweb/index.js";
import {
  agentDataDir,
  crawlMetrics,
  type ExitResult,
  isRobotsUrl,
  listWarcFiles,
  type RequestTrace,
  readCrawlLogSoFar,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  traceRequests,
  type UbicrawlProcess,
  type WebFixture,
} from "./harness.js";

/**
 * SIGKILL mid-crawl, then the same command again on the same data dir: the crawl completes, and only
 * the pages not durable at the kill are fetched twice: a host's next fetch does not wait for its last
 * page's commit, so at most the last {@link UNSYNCED_PAGES_PER_HOST} requests of each host.
 */

const MAX_DEPTH = 8;
const MAX_ACTIVE_HOSTS = 8;
const AGENT = {
  id: "phoenix",
  flags: ["--max-depth", String(MAX_DEPTH), "--max-active-hosts", String(MAX_ACTIVE_HOSTS)],
};
/** Kill once this share of the truth was served. */
const KILL_AT_SHARE = 0.4;

let fixture: WebFixture;
let truth: Truth;
let trace: RequestTrace;
/** Requests of the killed run: the trace's first `killedRunRequests` entries. */
let killedRunRequests: number;
let killed: ExitResult;
let openFilesAfterKill: string[];
let killedRunLog: CrawlLogEntry[];
let restarted: ExitResult;

beforeAll(async () => {
  // Slow responses stretch the crawl to a few seconds, so the kill lands mid-crawl.
  fixture = await startWebFixture({
    seed: 21,
    hosts: 30,
    pages: 2000,
    maxArticlesPerHost: 150,
    responseDelayMs: 10,
  });
  truth = fixture.truth({ maxDepth: MAX_DEPTH });
  trace = traceRequests(fixture.web.recorder);
  const first = spawnAgent(fixture, AGENT);
  const target = Math.ceil(truth.urls.length * KILL_AT_SHARE);
  await waitForServed(target, first);
  first.kill("SIGKILL");
  killed = await first.waitForExit();
  // Let requests the dead process had already written reach the test web's event loop.
  await delay(200);
  killedRunRequests = trace.requests.length;
  const dataDir = agentDataDir(fixture, AGENT);
  openFilesAfterKill = (await listWarcFiles(dataDir)).filter((file) => file.endsWith(".open"));
  killedRunLog = await readCrawlLogSoFar(dataDir);
  restarted = await spawnAgent(fixture, AGENT).waitForExit();
  trace.stop();
});

afterAll(async () => {
  await fixture?.stop();
});

async function waitForServed(pages: number, agent: UbicrawlProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (servedPages(fixture.web.recorder).size < pages) {
    if (agent.exited || Date.now() > deadline)
      throw new Error(`the agent did not serve ${pages} pages in time`);
    await delay(5);
  }
}

describe("an agent SIGKILLed mid-crawl and restarted", () => {
  it("was killed mid-crawl, leaving its live WARC file open", () => {
    expect(killed.signal).toBe("SIGKILL");
    const firstRunPages = new Set(
      trace.requests
        .slice(0, killedRunRequests)
        .map((request) => request.url)
        .filter((url) => !isRobotsUrl(url)),
    );
    expect(firstRunPages.size).toBeGreaterThanOrEqual(truth.urls.length * KILL_AT_SHARE);
    expect(firstRunPages.size).toBeLessThan(truth.urls.length);
    expect(openFilesAfterKill.length).toBe(1);
  });

  it("completes the crawl after the restart: the union of both runs is the truth", () => {
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(restarted.stderr).toContain("stopped (done)");
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.extra).toEqual([]);
    expect(metrics.coverage).toBe(1);
  });

  it(`fetches again only pages not durable at the kill: at most the last ${UNSYNCED_PAGES_PER_HOST} of each host`, () => {
    const repeated = crawlMetrics(servedPages(fixture.web.recorder), truth.urls).repeated;
    expect(repeated.length).toBeLessThanOrEqual(MAX_ACTIVE_HOSTS * UNSYNCED_PAGES_PER_HOST);
    const lastOfHost = new Map<string, string[]>();
    for (const request of trace.requests.slice(0, killedRunRequests)) {
      if (isRobotsUrl(request.url)) continue;
      const last = lastOfHost.get(request.host) ?? [];
      last.push(request.url);
      lastOfHost.set(request.host, last.slice(-UNSYNCED_PAGES_PER_HOST));
    }
    const notDurableAtKill = new Set([...lastOfHost.values()].flat());
    for (const url of repeated) {
      expect(notDurableAtKill.has(url), `${url} was fetched twice`).toBe(true);
      // Served once before the kill and once after the restart, never more.
      expect(fixture.web.recorder.servedCounts().get(url)).toBe(2);
    }
  });

  it("logged, before the kill, only fetches that the test web served", () => {
    const served = new Set(trace.requests.slice(0, killedRunRequests).map((request) => request.url));
    const logged = killedRunLog.filter((entry) => entry.status > 0).map((entry) => entry.url);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.filter((url) => !served.has(url))).toEqual([]);
  });

  it("repairs the torn WARC file at restart: both runs' files are readable and hold every page", async () => {
    const dataDir = agentDataDir(fixture, AGENT);
    const files = await listWarcFiles(dataDir);
    expect(files.filter((file) => file.endsWith(".open"))).toEqual([]);
    expect(files.length).toBeGreaterThanOrEqual(2);
    const records = await readWarcRecords(dataDir);
    const responseFiles = new Set(
      records.filter((r) => r.type === "response" || r.type === "revisit").map((r) => r.file),
    );
    expect(responseFiles.size).toBe(files.length);
    const archived = new Set(
      records
        .filter((r) => r.type === "response" || r.type === "revisit")
        .map((r) => r.headers.get("warc-target-uri")),
    );
    expect(truth.urls.filter((url) => !archived.has(url))).toEqual([]);
    expect(archived.size).toBe(truth.urls.length);
  });
});
