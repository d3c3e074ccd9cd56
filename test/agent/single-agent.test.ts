import { spawnSync } from "node:child_process";
import robotsParserModule from "robots-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_DEFAULTS } from "../../src/agent/agent-options.js";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { respond, TRAP_HOST_NAME, type Truth, type WebModel } from "../../src/testweb/index.js";
import {
  agentDataDir,
  crawlMetrics,
  type ExitResult,
  hostOf,
  isRobotsUrl,
  listWarcFiles,
  logEvent,
  logRecords,
  readCrawlLogOf,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "./harness.js";

/** One agent crawls a 40-host web to completion; every check below reads the outcome of that crawl. */

const MAX_DEPTH = 8;
const MAX_PER_IP = 2;
const AGENT = { id: "solo", flags: ["--max-depth", String(MAX_DEPTH), "--max-per-ip", String(MAX_PER_IP)] };

let fixture: WebFixture;
let truth: Truth;
let firstRun: ExitResult;
let log: CrawlLogEntry[];

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 11, hosts: 40, pages: 2400 });
  truth = fixture.truth({ maxDepth: MAX_DEPTH });
  firstRun = await spawnAgent(fixture, AGENT).waitForExit();
  log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
});

afterAll(async () => {
  await fixture?.stop();
});

type RobotsParser = typeof robotsParserModule.default;
// CommonJS default export: the function itself at run time, a namespace to TypeScript under NodeNext.
const robotsParser: RobotsParser =
  typeof robotsParserModule === "function"
    ? (robotsParserModule as RobotsParser)
    : robotsParserModule.default;

/** Robots verdict for `url`, evaluated independently from the crawler with robots-parser. */
function robotsAllows(model: WebModel, port: number, url: string): boolean {
  const host = hostOf(url);
  const answer = respond(model, port, model.hostIndexByName.get(host) ?? -1, "/robots.txt");
  if (answer.status >= 500) return false;
  if (answer.status >= 400) return true;
  const robots = robotsParser(`http://${host}:${port}/robots.txt`, String(answer.body));
  return robots.isAllowed(url, AGENT_DEFAULTS.userAgent) !== false;
}

describe("one agent crawling the test web with --exit-when-done", () => {
  it("exits 0 and prints a summary of the crawl", () => {
    expect(firstRun.code, firstRun.stderr).toBe(0);
    const stopped = logEvent(firstRun.stderr, "stopped");
    expect(stopped).toMatchObject({
      level: "info",
      agent: "solo",
      reason: "done",
      pagesFetchedThisRun: truth.urls.length,
      pagesFetched: truth.urls.length,
      queuedUrls: 0,
    });
    expect(stopped?.msg).toMatch(/^stopped \(done\) after [\d.]+ s: \d+ pages/);
    // Every line of stderr is a JSON record (stderr is not a terminal).
    expect(firstRun.stderr.trim().split("\n").length).toBe(logRecords(firstRun.stderr).length);
  });

  it("fetches exactly the ground truth, each URL once (coverage 100%, overlap 0)", () => {
    expect(truth.depthExact).toBe(true);
    expect(truth.cappedHosts).toEqual([]);
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.extra).toEqual([]);
    expect(metrics.repeated).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(metrics.overlap).toBe(0);
    expect(metrics.unique).toBe(truth.urls.length);
  });

  it("requests no URL that robots.txt disallows", () => {
    const { model, port, recorder } = fixture.web;
    const disallowed = [...servedPages(recorder).keys()].filter((url) => !robotsAllows(model, port, url));
    expect(disallowed).toEqual([]);
    // The web does disallow some linked URLs, so the check above is not vacuous.
    expect(truth.robotsDisallowed).toBeGreaterThan(0);
    const unavailable = model.hosts[model.unavailableRobotsHost];
    expect([...servedPages(recorder).keys()].filter((url) => hostOf(url) === unavailable?.name)).toEqual([]);
  });

  it("never sends two requests at once to a host, nor more than --max-per-ip to an address", () => {
    const { recorder } = fixture.web;
    expect(recorder.maxConcurrencyPerHost()).toBe(1);
    expect(recorder.hostsWithConcurrentRequests()).toEqual([]);
    expect(recorder.maxConcurrencyPerIp()).toBeLessThanOrEqual(MAX_PER_IP);
  });

  it("bounds the calendar trap by --max-depth", () => {
    const onTrap = (url: string) => hostOf(url) === TRAP_HOST_NAME;
    const expected = truth.urls.filter(onTrap).length;
    expect(expected).toBeGreaterThan(MAX_DEPTH);
    const served = [...servedPages(fixture.web.recorder).keys()].filter(onTrap);
    expect(served.length).toBe(expected);
    const depths = log.filter((entry) => onTrap(entry.url)).map((entry) => entry.depth);
    expect(Math.max(...depths)).toBe(MAX_DEPTH);
  });

  it("fetches each host's robots.txt once (the 503 one --max-robots-attempts times)", () => {
    const { model, recorder } = fixture.web;
    const crawled = new Set(truth.urls.map(hostOf));
    expect(crawled.size).toBeGreaterThan(model.normalHosts / 2);
    for (const host of crawled) expect(recorder.robotsFetches(host), host).toBe(1);
    const unavailable = model.hosts[model.unavailableRobotsHost]?.name as string;
    expect(crawled.has(unavailable)).toBe(false);
    expect(logEvent(firstRun.stderr, "stopped")?.errors).toMatchObject({ robots_unavailable: 1 });
    expect(recorder.robotsFetches(unavailable)).toBe(2);
    const robotsHosts = [...recorder.servedCounts().keys()].filter(isRobotsUrl).map(hostOf);
    expect(robotsHosts.sort()).toEqual([...crawled, unavailable].sort());
  });

  it("writes one crawl-log line per fetch with the documented fields", () => {
    const fetched = log.filter((entry) => entry.status > 0);
    expect(fetched.map((entry) => entry.url).sort()).toEqual([...truth.urls].sort());
    for (const entry of log) {
      expect(Number.isNaN(Date.parse(entry.ts))).toBe(false);
      expect(typeof entry.url).toBe("string");
      expect(Number.isInteger(entry.status)).toBe(true);
      expect(Number.isInteger(entry.bytes)).toBe(true);
      expect(typeof entry.contentType).toBe("string");
      expect(Number.isInteger(entry.links)).toBe(true);
      expect(entry.durationMs).toBeGreaterThanOrEqual(0);
      expect(entry.depth).toBeGreaterThanOrEqual(0);
      expect(entry.depth).toBeLessThanOrEqual(MAX_DEPTH);
      if (entry.status === 0) expect(entry.error).toMatch(/^UBI_ERR_/);
      else expect(entry.error).toBeUndefined();
    }
    const home = fetched.find((entry) => entry.url === fixture.web.seeds[0]);
    expect(home).toMatchObject({ status: 200, contentType: "text/html", depth: 0 });
    expect(home?.bytes).toBeGreaterThan(0);
    expect(home?.links).toBeGreaterThan(0);
    expect(fetched.some((entry) => entry.status === 404)).toBe(true);
    expect(fetched.some((entry) => entry.status >= 300 && entry.status < 400)).toBe(true);
  });

  it("logs names missing from the hosts file as UBI_ERR_DNS_NOT_FOUND, without any request", () => {
    expect(truth.unresolvableHosts.length).toBeGreaterThan(0);
    expect(truth.unresolvableHosts.every((host) => host.startsWith("gone"))).toBe(true);
    const failed = log.filter((entry) => entry.error === "UBI_ERR_DNS_NOT_FOUND");
    expect([...new Set(failed.map((entry) => hostOf(entry.url)))].sort()).toEqual(truth.unresolvableHosts);
    expect(failed.every((entry) => entry.status === 0 && entry.bytes === 0)).toBe(true);
    expect(log.filter((entry) => entry.status === 0 && entry.error !== "UBI_ERR_DNS_NOT_FOUND")).toEqual([]);
    const served = [...fixture.web.recorder.servedCounts().keys()];
    expect(served.filter((url) => hostOf(url).startsWith("gone"))).toEqual([]);
  });

  it("archives a request and a response per fetch in readable, closed WARC files", async () => {
    const dataDir = agentDataDir(fixture, AGENT);
    const files = await listWarcFiles(dataDir);
    expect(files.length).toBeGreaterThan(0);
    expect(files.every((file) => file.endsWith(".warc.gz"))).toBe(true);
    const records = await readWarcRecords(dataDir);
    expect(records[0]?.type).toBe("warcinfo");
    const requests = new Map<string, string>();
    const responses = new Map<string, { id: string; concurrentTo: string; statusLine: string }>();
    for (const record of records) {
      const uri = record.headers.get("warc-target-uri") ?? "";
      if (record.type === "request") {
        expect(requests.has(uri), `two requests for ${uri}`).toBe(false);
        requests.set(uri, record.headers.get("warc-concurrent-to") ?? "");
      } else if (record.type === "response" || record.type === "revisit") {
        expect(responses.has(uri), `two responses for ${uri}`).toBe(false);
        const block = Buffer.from(record.block);
        responses.set(uri, {
          id: record.headers.get("warc-record-id") ?? "",
          concurrentTo: record.headers.get("warc-concurrent-to") ?? "",
          statusLine: block.toString("latin1", 0, block.indexOf("\r\n")),
        });
      }
    }
    const fetched = log.filter((entry) => entry.status > 0);
    expect([...requests.keys()].sort()).toEqual(fetched.map((entry) => entry.url).sort());
    expect([...responses.keys()].sort()).toEqual([...requests.keys()].sort());
    for (const entry of fetched) {
      const response = responses.get(entry.url);
      expect(response?.statusLine.startsWith(`HTTP/1.1 ${entry.status} `), entry.url).toBe(true);
      expect(requests.get(entry.url)).toBe(response?.id);
    }
  });

  it("writes WARC files that gzip -t accepts", async (context) => {
    if (spawnSync("gzip", ["--version"]).status !== 0) context.skip();
    for (const file of await listWarcFiles(agentDataDir(fixture, AGENT))) {
      const check = spawnSync("gzip", ["-t", file], { encoding: "utf8" });
      expect(check.status, check.stderr).toBe(0);
    }
  });

  it("fetches nothing when run again on the finished data dir", async () => {
    const { recorder } = fixture.web;
    recorder.reset();
    const linesBefore = log.length;
    const again = await spawnAgent(fixture, AGENT).waitForExit(20_000);
    expect(again.code, again.stderr).toBe(0);
    expect(logEvent(again.stderr, "stopped")).toMatchObject({ reason: "done", pagesFetchedThisRun: 0 });
    expect(recorder.totalServed).toBe(0);
    expect((await readCrawlLogOf(agentDataDir(fixture, AGENT))).length).toBe(linesBefore);
    const records = await readWarcRecords(agentDataDir(fixture, AGENT));
    expect(records.filter((record) => record.type === "response" || record.type === "revisit").length).toBe(
      log.filter((entry) => entry.status > 0).length,
    );
  });
});
