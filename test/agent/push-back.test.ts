import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import { logEvent, readCrawlLogOf, runUbicrawl } from "./harness.js";

/**
 * Servers that push back: two hosts that take 5 requests a second each and refuse the rest, one with
 * 429 and `Retry-After: 1`, the other with 503 and no `Retry-After`. A crawl with --delay-ms 0 must get
 * every page, honour the Retry-After, and settle near the allowed rate instead of bursting.
 */

const PAGES = 40;
const LIMIT_PER_S = 5;
const HOSTS = { "a.push.test": "retry-after", "b.push.test": "plain" } as const;

interface Served {
  readonly host: string;
  readonly path: string;
  readonly atMs: number;
  readonly status: number;
}

let dir: string;
let server: Server;
let port: number;
const served: Served[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-push-back-"));
  const admitted = new Map<string, number[]>();
  server = createServer((request, response) => {
    const host = (request.headers.host ?? "").split(":")[0] as keyof typeof HOSTS;
    const path = request.url ?? "/";
    const atMs = Date.now();
    const answer = (status: number, headers: Record<string, string>, body: string) => {
      served.push({ host, path, atMs, status });
      response.writeHead(status, { "content-type": "text/html", ...headers }).end(body);
    };
    if (path === "/robots.txt") {
      answer(404, {}, "");
      return;
    }
    const recent = (admitted.get(host) ?? []).filter((time) => time > atMs - 1000);
    if (recent.length >= LIMIT_PER_S) {
      admitted.set(host, recent);
      if (HOSTS[host] === "retry-after") answer(429, { "retry-after": "1" }, "slow down");
      else answer(503, {}, "busy");
      return;
    }
    admitted.set(host, [...recent, atMs]);
    const n = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? -1);
    if (n < 0 || n >= PAGES) {
      answer(404, {}, "no such page");
      return;
    }
    const links = [n + 1, n + 2]
      .filter((next) => next < PAGES)
      .map((next) => `<a href="/p/${next}">${next}</a>`);
    answer(200, {}, `<html><body><h1>page ${n}</h1>${links.join(" ")}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(
    join(dir, "hosts"),
    Object.keys(HOSTS)
      .map((name) => `127.0.0.1 ${name}\n`)
      .join(""),
  );
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("a server that answers 429 or 503 beyond its rate", () => {
  it("gets every page fetched, waits out Retry-After, and settles near the allowed rate", async () => {
    const seeds = Object.keys(HOSTS).map((name) => `http://${name}:${port}/p/0`);
    const data = join(dir, "data");
    const result = await runUbicrawl(
      agentArgv({
        ...testWebAgentFlags(join(dir, "hosts")),
        // This server has no sitemap, and its requests are counted.
        sitemaps: "listed",
        id: "polite",
        data,
        seeds,
        "max-fetch-attempts": 10,
      }),
    ).waitForExit(120_000);
    expect(result.code, result.stderr).toBe(0);

    // Every page, once, as a 200: no refused page was dropped or archived as a refusal.
    const log = await readCrawlLogOf(data);
    const pages = log.filter((entry) => entry.willRetry !== true);
    for (const name of Object.keys(HOSTS)) {
      const fetched = pages.filter((entry) => entry.url.startsWith(`http://${name}:`));
      expect(fetched.map((entry) => entry.status)).toEqual(Array(PAGES).fill(200));
    }
    // The refusals are logged as attempts with their status, and counted as retries.
    const attempts = log.filter((entry) => entry.willRetry === true);
    expect(attempts.length).toBeGreaterThan(0);
    expect(new Set(attempts.map((entry) => entry.status))).toEqual(new Set([429, 503]));
    expect(logEvent(result.stderr, "stopped")).toMatchObject({ fetchRetries: attempts.length });

    // Retry-After: 1 holds the whole host for a second after each 429.
    const onA = served.filter((request) => request.host === "a.push.test" && request.path !== "/robots.txt");
    for (const [i, request] of onA.entries()) {
      if (request.status !== 429) continue;
      const next = onA[i + 1];
      if (next !== undefined)
        expect(next.atMs - request.atMs, `request after the 429 at #${i}`).toBeGreaterThanOrEqual(990);
    }
    // With Retry-After (the done-when): at most 10% of the host's requests refused.
    const refusedA = onA.filter((request) => request.status === 429).length;
    expect(refusedA, `${refusedA} of ${onA.length} requests refused`).toBeLessThanOrEqual(0.1 * onA.length);
    // Without Retry-After the host's rate backs off: most requests are answered, not refused.
    const onB = served.filter((request) => request.host === "b.push.test" && request.path !== "/robots.txt");
    const refused = onB.filter((request) => request.status === 503).length;
    expect(refused, `${refused} of ${onB.length} requests refused`).toBeLessThan(0.3 * onB.length);
  }, 150_000);
});
