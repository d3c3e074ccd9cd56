import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import { logEvent, readCrawlLogOf, runUbicrawl } from "./harness.js";

/**
 * A host dripping its page one byte a second costs a worker at most --min-rate-window-ms plus a second:
 * the fetch fails as too slow, the connection is dropped, and the rest of the crawl goes on.
 */

const WINDOW_MS = 2_000;

let dir: string;
let server: Server;
let port: number;
/** When the dripping request arrived, and when its connection closed. */
const drip: { startedAtMs?: number; closedAtMs?: number } = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-slow-sender-"));
  server = createServer((request, response) => {
    const path = request.url ?? "/";
    if (path === "/drip") {
      drip.startedAtMs = Date.now();
      response.writeHead(200, { "content-type": "text/html" });
      response.flushHeaders(); // the headers at once, then the body a byte a second
      const timer = setInterval(() => response.write("x"), 1000);
      response.on("close", () => {
        clearInterval(timer);
        drip.closedAtMs = Date.now();
      });
      return;
    }
    if (path === "/") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end('<a href="/drip">slow</a> <a href="/next">next</a>');
      return;
    }
    if (path === "/next") {
      response.writeHead(200, { "content-type": "text/html" }).end("<p>the end</p>");
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(join(dir, "hosts"), "127.0.0.1 drip.test\n");
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("a server dripping a byte a second", () => {
  it(`holds a worker for --min-rate-window-ms ${WINDOW_MS} plus a second at most`, async () => {
    const data = join(dir, "data");
    const result = await runUbicrawl(
      agentArgv({
        ...testWebAgentFlags(join(dir, "hosts")),
        id: "impatient",
        data,
        seeds: [`http://drip.test:${port}/`],
        "min-rate-window-ms": WINDOW_MS,
      }),
    ).waitForExit(60_000);
    expect(result.code, result.stderr).toBe(0);

    const log = await readCrawlLogOf(data);
    const dripped = log.find((entry) => entry.url.endsWith("/drip"));
    expect(dripped?.error).toBe(ErrorCode.TooSlow);
    expect(dripped?.durationMs).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    expect(dripped?.durationMs).toBeLessThanOrEqual(WINDOW_MS + 1000);
    // The agent hung up: the server saw its connection close within the window plus a second.
    expect(drip.closedAtMs).toBeDefined();
    expect((drip.closedAtMs ?? 0) - (drip.startedAtMs ?? 0)).toBeLessThanOrEqual(WINDOW_MS + 1000);
    // Not retried (a dripping server drips again), and the rest of the host was crawled.
    expect(log.filter((entry) => entry.url.endsWith("/drip"))).toHaveLength(1);
    expect(log.find((entry) => entry.url.endsWith("/next"))?.status).toBe(200);
    expect(logEvent(result.stderr, "stopped")?.errors).toMatchObject({ [ErrorCode.TooSlow]: 1 });
  }, 90_000);
});
