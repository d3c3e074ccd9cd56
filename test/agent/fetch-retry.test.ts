import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { ErrorCode } from "../../src/errors.js";
import { inProcessAgentOptions, readCrawlLogOf, waitFor } from "./harness.js";

/**
 * A fetch that fails in a way that may pass (the server drops the connection before answering, as an
 * overloaded or restarting one does) is tried again after a growing wait, up to --max-fetch-attempts
 * times, before the URL counts as failed; a host whose URLs keep failing gets no more retries.
 */

const HOST = "flaky.test";
const ATTEMPTS = 3;

let dir: string;
let server: Server;
let agent: Agent | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-fetch-retry-"));
});

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

/** Serves `pages`; a path mapped to n in `drops` has its first n requests' connections dropped. */
async function startServer(pages: Record<string, string>, drops: Map<string, number>): Promise<string[]> {
  const requests: string[] = [];
  server = createServer((request, response) => {
    const path = request.url ?? "";
    requests.push(path);
    if (path === "/robots.txt") {
      response.writeHead(404).end();
      return;
    }
    const left = drops.get(path) ?? 0;
    if (left > 0) {
      drops.set(path, left - 1);
      request.socket.destroy();
      return;
    }
    response.writeHead(200, { "content-type": "text/html" }).end(pages[path] ?? "<p>end</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return requests;
}

async function startAgent(seed: string): Promise<Agent> {
  const port = (server.address() as AddressInfo).port;
  const hostsFile = join(dir, "hosts");
  await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);
  const options = inProcessAgentOptions(
    { id: "a", dataDir: join(dir, "data"), seeds: [`http://${HOST}:${port}${seed}`], hostsFile },
    // This server has no sitemap, and its requests are counted.
    { maxFetchAttempts: ATTEMPTS, fetchRetryMs: 50, sitemaps: "off" },
  );
  const started = await Agent.open(options);
  await started.start();
  return started;
}

it("fetches a page whose first connections were dropped, logging each failed attempt", async () => {
  const requests = await startServer({ "/": '<a href="/next">next</a>' }, new Map([["/", ATTEMPTS - 1]]));
  agent = await startAgent("/");
  await waitFor(() => agent?.stats.pagesFetched === 2, "both pages fetched");
  await agent.stop();

  expect(requests).toEqual(["/robots.txt", "/", "/", "/", "/next"]);
  expect(agent.stats.fetchRetries).toBe(ATTEMPTS - 1);
  expect([...agent.stats.errors]).toEqual([]);
  const log = await readCrawlLogOf(join(dir, "data"));
  expect(
    log.map((entry) => [new URL(entry.url).pathname, entry.status, entry.error, entry.willRetry]),
  ).toEqual([
    ["/", 0, ErrorCode.ConnectFailed, true],
    ["/", 0, ErrorCode.ConnectFailed, true],
    ["/", 200, undefined, undefined],
    ["/next", 200, undefined, undefined],
  ]);
});

it("gives a URL up after --max-fetch-attempts, and a host that keeps failing gets single attempts", async () => {
  const links = Array.from({ length: 4 }, (_, i) => `<a href="/p${i}">p${i}</a>`).join("");
  const drops = new Map(Array.from({ length: 4 }, (_, i) => [`/p${i}`, 100] as [string, number]));
  const requests = await startServer({ "/": links }, drops);
  agent = await startAgent("/");
  await waitFor(() => (agent?.stats.errors.get(ErrorCode.ConnectFailed) ?? 0) === 4, "all four given up");
  await agent.stop();

  // p0 and p1 get their full attempts; after two URLs failed in a row, p2 and p3 get one each.
  const count = (path: string) => requests.filter((request) => request === path).length;
  expect([count("/p0"), count("/p1"), count("/p2"), count("/p3")]).toEqual([ATTEMPTS, ATTEMPTS, 1, 1]);
  expect(agent.stats.fetchRetries).toBe(2 * (ATTEMPTS - 1));
  expect(agent.frontier.waitingUrls).toBe(0);
});
