import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import { logRecords, readCrawlLogOf, runUbicrawl } from "./harness.js";

/**
 * A robots.txt Crawl-delay longer than a moment: the host is crawled at exactly that pace (robots.txt's
 * own request included), and while it waits its worker serves other hosts — with a single worker
 * (--max-active-hosts 1), a fast host is crawled to the end between two of the slow host's requests.
 * The wait shows in the progress records as hosts paced by Crawl-delay.
 */

const CRAWL_DELAY_S = 3;
/**
 * Three pages after robots.txt: three gaps of a Crawl-delay each (9 s; 12 s with four), and the slow
 * host waits from 3 s to 6 s into the crawl, when the first progress record (every 5 s) comes.
 */
const SLOW_PAGES = 3;
const FAST_PAGES = 30;
/** The fast host answers after this long, so its crawl takes a while but far less than one Crawl-delay. */
const FAST_ANSWER_MS = 30;
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
const served: Served[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-crawl-delay-"));
  server = createServer((request, response) => {
    const host = (request.headers.host ?? "").split(":")[0] ?? "";
    const path = request.url ?? "/";
    served.push({ host, path, atMs: Date.now() });
    const slow = host === "slow.delay.test";
    if (path === "/robots.txt") {
      if (slow)
        response
          .writeHead(200, { "content-type": "text/plain" })
          .end(`User-agent: *\nCrawl-delay: ${CRAWL_DELAY_S}\n`);
      else response.writeHead(404).end();
      return;
    }
    const n = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? -1);
    const pages = slow ? SLOW_PAGES : FAST_PAGES;
    if (n < 0 || n >= pages) {
      response.writeHead(404).end();
      return;
    }
    // A chain on the slow host, a binary tree on the fast one (within the default depth limit).
    const next = slow ? [n + 1] : [2 * n + 1, 2 * n + 2];
    const links = next.filter((m) => m < pages).map((m) => `<a href="/p/${m}">${m}</a>`);
    const body = `<html><body>${links.join(" ")}</body></html>`;
    setTimeout(
      () => response.writeHead(200, { "content-type": "text/html" }).end(body),
      slow ? 0 : FAST_ANSWER_MS,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(join(dir, "hosts"), "127.0.0.1 slow.delay.test\n127.0.0.1 fast.delay.test\n");
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe(`a robots.txt asking for Crawl-delay: ${CRAWL_DELAY_S}`, () => {
  it("is honoured to the second, and the waiting host frees its worker for others", async () => {
    const data = join(dir, "data");
    const result = await runUbicrawl(
      agentArgv({
        ...testWebAgentFlags(join(dir, "hosts")),
        // This server has no sitemap, and its requests are counted.
        sitemaps: "listed",
        id: "paced",
        data,
        // The slow host first, so that it takes the only worker before the fast one is queued.
        seeds: [`http://slow.delay.test:${port}/p/0`, `http://fast.delay.test:${port}/p/0`],
        "max-active-hosts": 1,
        progress: "log",
      }),
    ).waitForExit(60_000);
    expect(result.code, result.stderr).toBe(0);
    const log = await readCrawlLogOf(data);
    expect(log.filter((entry) => entry.status === 200)).toHaveLength(SLOW_PAGES + FAST_PAGES);

    // Never faster than asked, from the robots.txt request on.
    const slow = served.filter((request) => request.host === "slow.delay.test");
    expect(slow.map((request) => request.path)).toEqual([
      "/robots.txt",
      ...Array.from({ length: SLOW_PAGES }, (_, n) => `/p/${n}`),
    ]);
    for (let i = 1; i < slow.length; i++) {
      const gap = (slow[i]?.atMs ?? 0) - (slow[i - 1]?.atMs ?? 0);
      expect(gap, `gap before ${slow[i]?.path}`).toBeGreaterThanOrEqual(CRAWL_DELAY_S * 1000 - TOLERANCE_MS);
    }

    // The single worker was not held through the waits: the fast host was crawled to its end before
    // the slow host's second page (sleeping in the visit, it would have waited a quantum of delays).
    const fast = served.filter((request) => request.host === "fast.delay.test");
    expect(fast).toHaveLength(FAST_PAGES + 1);
    const lastFast = Math.max(...fast.map((request) => request.atMs));
    const slowSecondPage = slow.find((request) => request.path === "/p/1")?.atMs ?? 0;
    expect(lastFast).toBeLessThan(slowSecondPage);

    // The wait has a name in the progress records.
    const paced = logRecords(result.stderr).filter(
      (record) =>
        record.event === "progress" &&
        (record.waiting as { reason: string; hosts: number }[]).some(
          (entry) => entry.reason === "crawl-delay" && entry.hosts === 1,
        ),
    );
    expect(paced.length, result.stderr).toBeGreaterThan(0);
  }, 90_000);
});
