import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Agent, type ClusterHooks } from "../../src/agent/index.js";
import { systemClock } from "../../src/clock.js";
import { inProcessAgentOptions, waitFor } from "./harness.js";

/**
 * A host can change hands while its worker waits out the politeness delay. The new owner may be
 * fetching it already, so the old owner must not send the request it was waiting to send: the URL
 * goes back to the head of the queue (handed over with the rest), and the host sees no second request.
 */

const DELAY_MS = 1500;
const HOST = "handover.test";

let dir: string;
let server: Server;
let agent: Agent | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-handover-"));
});

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

it("sends no request to a host lost during the politeness wait, and keeps its URL queued", async () => {
  const requests: string[] = [];
  server = createServer((request, response) => {
    requests.push(request.url ?? "");
    if (request.url === "/robots.txt") {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/html" });
    response.end(request.url === "/" ? '<a href="/next">next</a>' : "<p>end</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const hostsFile = join(dir, "hosts");
  await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);

  let owned = true;
  const hooks: ClusterHooks = {
    ownership: () => ({ ownerOfUrl: () => (owned ? "a" : "b") }),
    exchange: { send: () => {}, offer: () => {} },
    owns: () => owned,
    admit: () => 0,
    mayFetch: () => owned,
    isCrawlComplete: () => false,
    digests: {
      ownerOf: () => "a",
      check: async () => [],
      settle: async () => {},
    },
  };
  const options = inProcessAgentOptions(
    { id: "a", dataDir: join(dir, "data"), seeds: [`http://${HOST}:${port}/`], hostsFile },
    // This server has no sitemap, and the host's queue is checked URL by URL.
    { delayMs: DELAY_MS, sitemaps: "off" },
  );
  agent = await Agent.open(options, { clock: systemClock, cluster: hooks });
  await agent.start();

  // The home page is fetched; /next waits out the politeness delay, and the host changes hands then.
  await waitFor(
    () => agent?.stats.pagesFetched === 1 && agent.frontier.inFlightUrls === 1,
    "/ fetched and /next taken",
  );
  owned = false;
  await delay(DELAY_MS + 1000);

  expect(requests).toEqual(["/robots.txt", "/"]);
  const queued = await agent.frontier.drainHost(`${HOST}:${port}`);
  expect(queued.map((entry) => entry.url)).toEqual([`http://${HOST}:${port}/next`]);
});
