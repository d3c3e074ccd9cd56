import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import { measureAgentDirs } from "../../src/report/index.js";
import { logEvent, logRecords, readCrawlLogOf, runUbicrawl } from "./harness.js";

/**
 * A robots.txt asking for `Crawl-delay: 3500` (a host of three pages would take hours), against an
 * operator's `--max-crawl-delay 1`: with `--crawl-delay-policy cap` the host is crawled a request a
 * second; with `skip` none of its pages is requested, each counted and logged as crawl-delay-too-long,
 * while a host with no Crawl-delay is crawled as usual.
 */

const LONG_DELAY_S = 3500;
const MAX_DELAY_S = 1;
const PAGES = 3;
/** Slack between the agent's clock (end of a response) and the server's (start of a request). */
const TOLERANCE_MS = 20;

interface Served {
  readonly host: string;
  readonly path: string;
  readonly atMs: number;
}

let dir: string;
let server: Server;
let port: number;
let served: Served[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-crawl-delay-bound-"));
  server = createServer((request, response) => {
    const host = (request.headers.host ?? "").split(":")[0] ?? "";
    const path = request.url ?? "/";
    served.push({ host, path, atMs: Date.now() });
    if (path === "/robots.txt") {
      if (host === "long.delay.test")
        response
          .writeHead(200, { "content-type": "text/plain" })
          .end(`User-agent: *\nCrawl-delay: ${LONG_DELAY_S}\n`);
      else response.writeHead(404).end();
      return;
    }
    const n = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? -1);
    if (n < 0 || n >= PAGES) {
      response.writeHead(404).end();
      return;
    }
    const next = n + 1 < PAGES ? `<a href="/p/${n + 1}">next</a>` : "";
    response.writeHead(200, { "content-type": "text/html" }).end(`<html><body>${next}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(join(dir, "hosts"), "127.0.0.1 long.delay.test\n127.0.0.1 open.delay.test\n");
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** The paths requested of `host`, in order, with the gap before each. */
function requestsOf(host: string): { path: string; gapMs: number }[] {
  const of = served.filter((request) => request.host === host);
  return of.map((request, i) => ({ path: request.path, gapMs: request.atMs - (of[i - 1]?.atMs ?? 0) }));
}

describe(`a robots.txt asking for Crawl-delay: ${LONG_DELAY_S}, over --max-crawl-delay ${MAX_DELAY_S}`, () => {
  it("is crawled a request every --max-crawl-delay under --crawl-delay-policy cap, and said once", async () => {
    served = [];
    const data = join(dir, "cap");
    const result = await runUbicrawl(
      agentArgv({
        ...testWebAgentFlags(join(dir, "hosts")),
        sitemaps: "listed",
        id: "capped",
        data,
        seeds: [`http://long.delay.test:${port}/p/0`],
        "max-crawl-delay": MAX_DELAY_S,
        "crawl-delay-policy": "cap",
      }),
    ).waitForExit(60_000);
    expect(result.code, result.stderr).toBe(0);
    const requests = requestsOf("long.delay.test");
    expect(requests.map((request) => request.path)).toEqual([
      "/robots.txt",
      ...Array.from({ length: PAGES }, (_, n) => `/p/${n}`),
    ]);
    for (const { path, gapMs } of requests.slice(1)) {
      expect(gapMs, `gap before ${path}`).toBeGreaterThanOrEqual(MAX_DELAY_S * 1000 - TOLERANCE_MS);
    }
    expect((await readCrawlLogOf(data)).filter((entry) => entry.status === 200)).toHaveLength(PAGES);
    const said = logRecords(result.stderr).filter((record) => record.event === "crawl-delay-capped");
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({
      host: `long.delay.test:${port}`,
      crawlDelayMs: LONG_DELAY_S * 1000,
      maxCrawlDelayMs: MAX_DELAY_S * 1000,
      policy: "cap",
    });
  }, 90_000);

  it("has its pages skipped under --crawl-delay-policy skip (from a config file): counted and logged", async () => {
    served = [];
    const data = join(dir, "skip");
    const config = join(dir, "skip.yaml");
    await writeFile(config, `max-crawl-delay: ${MAX_DELAY_S}\ncrawl-delay-policy: skip\n`);
    const skipped = Array.from({ length: PAGES }, (_, n) => `http://long.delay.test:${port}/p/${n}`);
    const result = await runUbicrawl(
      agentArgv({
        ...testWebAgentFlags(join(dir, "hosts")),
        sitemaps: "listed",
        id: "skipping",
        data,
        config,
        seeds: [...skipped, `http://open.delay.test:${port}/p/0`],
      }),
    ).waitForExit(60_000);
    expect(result.code, result.stderr).toBe(0);
    // Only robots.txt was asked of the host; the host without a Crawl-delay was crawled whole.
    expect(requestsOf("long.delay.test").map((request) => request.path)).toEqual(["/robots.txt"]);
    expect(requestsOf("open.delay.test")).toHaveLength(1 + PAGES);

    expect(logEvent(result.stderr, "stopped")?.dropped).toMatchObject({ "crawl-delay-too-long": PAGES });
    const said = logRecords(result.stderr).filter((record) => record.event === "crawl-delay-too-long");
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ crawlDelayMs: LONG_DELAY_S * 1000, policy: "skip" });

    const log = await readCrawlLogOf(data);
    const skippedLines = log.filter((entry) => entry.skipped === "crawl-delay-too-long");
    expect(skippedLines.map((entry) => entry.url).sort()).toEqual(skipped);
    for (const line of skippedLines) expect(line).toMatchObject({ status: 0, crawlDelayMs: 3_500_000 });
    // Skipped on purpose is no failure: the report counts the fetches only.
    const report = await measureAgentDirs([data]);
    expect([report.fetches, report.failures]).toEqual([PAGES, 0]);
  }, 90_000);

  it("is described by --help, with the defaults: 300 s, cap", async () => {
    const help = await runUbicrawl(["agent", "--help"]).waitForExit(30_000);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--max-crawl-delay S[\s\S]*default: 300/);
    expect(help.stdout).toMatch(/--crawl-delay-policy[\s\S]*cap[\s\S]*skip/);
  }, 60_000);
});
