import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import { progressText } from "../../src/agent/progress.js";
import { type Clock, systemClock } from "../../src/clock.js";
import { inProcessAgentOptions, waitFor } from "./harness.js";

/**
 * A robots.txt that answers 503 is asked again after `--robots-retry-ms`, up to
 * `--max-robots-attempts` times. Timers may fire a little before the wall clock reaches their
 * deadline (Node's timers run on a monotonic clock); waking up while the cached failure has not yet
 * expired must not count as an attempt, or the host is given up having been asked only once.
 */

const HOST = "robots-retry.test";
const ATTEMPTS = 3;

/** The real clock, but every timer fires `earlyMs` before its deadline. */
function earlyClock(earlyMs: number): Clock {
  return {
    now: () => systemClock.now(),
    setTimeout: (callback, delayMs) => systemClock.setTimeout(callback, Math.max(0, delayMs - earlyMs)),
    clearTimeout: (handle) => systemClock.clearTimeout(handle),
  };
}

let dir: string;
let server: Server;
let agent: Agent | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-robots-retry-"));
});

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

it("asks an unavailable robots.txt --max-robots-attempts times even when timers fire early", async () => {
  const requests: string[] = [];
  server = createServer((request, response) => {
    requests.push(request.url ?? "");
    if (request.url === "/robots.txt") response.writeHead(503).end();
    else response.writeHead(200, { "content-type": "text/html" }).end("<p>never asked</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const hostsFile = join(dir, "hosts");
  await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);
  const options = inProcessAgentOptions(
    { id: "a", dataDir: join(dir, "data"), seeds: [`http://${HOST}:${port}/`], hostsFile },
    { robotsRetryMs: 100, maxRobotsAttempts: ATTEMPTS },
  );
  agent = await Agent.open(options, { clock: earlyClock(20) });
  await agent.start();

  await waitFor(() => agent?.stats.errors.get("robots_unavailable") === 1, "robots.txt given up");
  expect(requests).toEqual(Array.from({ length: ATTEMPTS }, () => "/robots.txt"));
});

it("says, while it waits, that a host waits for its robots.txt and when it is asked again", async () => {
  server = createServer((request, response) => {
    if (request.url === "/robots.txt") response.writeHead(503).end();
    else response.writeHead(200, { "content-type": "text/html" }).end("<p>never asked</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const hostsFile = join(dir, "hosts");
  await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);
  const options = inProcessAgentOptions(
    { id: "a", dataDir: join(dir, "data"), seeds: [`http://${HOST}:${port}/`], hostsFile },
    { robotsRetryMs: 60_000, maxRobotsAttempts: ATTEMPTS },
  );
  agent = await Agent.open(options, { clock: systemClock });
  await agent.start();

  await waitFor(() => agent?.waiting().length === 1, "the host to wait");
  expect(agent.waiting()).toEqual([{ reason: "robots", hosts: 1, nextAtMs: expect.any(Number) }]);
  const line = progressText(agent);
  expect(line).toMatch(
    /1 queued, 0 active hosts, 0 errors; waiting: 1 host for robots\.txt, unavailable \(next in (59|60) s\)$/,
  );
});
