import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExitResult, runUbicrawl } from "./harness.js";

/**
 * Politeness where it can fail: responses that take 25 ms, hosts with deep queues (every page links
 * every other), three host names on one IP address, and one name on two ports (two origins, so two
 * hosts to the crawler, on the same address). Measured at the servers: requests in flight per host
 * (name and port) and per IP address, and the gap between one request's end and the next one's
 * start on each host. A lone agent with a politeness delay, many hosts visited at once and a per-IP
 * limit of 2.
 */

const PAGES_PER_HOST = 12;
const RESPONSE_MS = 25;
const DELAY_MS = 60;
const MAX_PER_IP = 2;
/** Slack for the two clocks: the agent measures from the end of a response as it reads it. */
const TOLERANCE_MS = 15;
const NAMES = ["a.polite.test", "b.polite.test", "c.polite.test"];

interface Served {
  readonly hostKey: string;
  readonly ip: string;
  readonly beganAtMs: number;
  endedAtMs: number;
}

let dir: string;
const servers: Server[] = [];
const served: Served[] = [];
const inFlight = { byHost: new Map<string, number>(), byIp: new Map<string, number>() };
const most = { byHost: new Map<string, number>(), byIp: new Map<string, number>() };
let run: ExitResult;

function bump(counts: Map<string, number>, peaks: Map<string, number>, key: string, by: number): void {
  const now = (counts.get(key) ?? 0) + by;
  counts.set(key, now);
  peaks.set(key, Math.max(peaks.get(key) ?? 0, now));
}

function startServer(ip: string): Promise<number> {
  const server = createServer((request, response) => {
    const hostKey = (request.headers.host ?? "").toLowerCase();
    if (request.url === "/robots.txt") {
      response.writeHead(404).end();
      return;
    }
    const entry: Served = { hostKey, ip, beganAtMs: performance.now(), endedAtMs: Number.NaN };
    served.push(entry);
    bump(inFlight.byHost, most.byHost, hostKey, 1);
    bump(inFlight.byIp, most.byIp, ip, 1);
    const links = Array.from({ length: PAGES_PER_HOST }, (_, i) => `<a href="/p${i}">p${i}</a>`).join("");
    setTimeout(() => {
      entry.endedAtMs = performance.now();
      bump(inFlight.byHost, most.byHost, hostKey, -1);
      bump(inFlight.byIp, most.byIp, ip, -1);
      response.writeHead(200, { "content-type": "text/html" }).end(links);
    }, RESPONSE_MS);
  });
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, ip, () => resolve((server.address() as AddressInfo).port)),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-one-at-a-time-"));
  // Two origins on 127.0.0.1 (one name on both ports, two more names on the first), one elsewhere.
  const [first, second] = [await startServer("127.0.0.1"), await startServer("127.0.0.1")];
  const other = await startServer("127.0.0.2");
  const hostsFile = join(dir, "hosts");
  await writeFile(
    hostsFile,
    `${NAMES.map((name) => `127.0.0.1 ${name}`).join("\n")}\n127.0.0.2 d.polite.test\n`,
  );
  const seeds = [
    ...NAMES.map((name) => `http://${name}:${first}/`),
    `http://a.polite.test:${second}/`,
    `http://d.polite.test:${other}/`,
  ];
  run = await runUbicrawl([
    "agent",
    "--id",
    "polite",
    "--data",
    join(dir, "data"),
    "--seeds",
    ...seeds,
    "--hosts-file",
    hostsFile,
    "--allow-net",
    "127.0.0.0/8",
    "--delay-ms",
    String(DELAY_MS),
    "--max-per-ip",
    String(MAX_PER_IP),
    // No spacing of starts per address (by default the host delay): --max-per-ip alone is reached.
    "--ip-delay-ms",
    "0",
    "--max-active-hosts",
    "16",
    // These servers have no sitemap, and their pages are counted.
    "--sitemaps",
    "listed",
    "--exit-when-done",
    "--progress",
    "off",
  ]).waitForExit(60_000);
}, 90_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await rm(dir, { recursive: true, force: true });
});

describe("one request at a time per host, politely", () => {
  it("crawls every page of the five hosts once", () => {
    expect(run.code, run.stderr).toBe(0);
    expect(served.length).toBe(5 * (PAGES_PER_HOST + 1));
  });

  it("never sends a host (a name and a port) two requests at once", () => {
    expect(most.byHost.size).toBe(5);
    for (const [host, peak] of most.byHost) expect(peak, host).toBe(1);
  });

  it("keeps at most --max-per-ip requests in flight to one address, though four hosts share it", () => {
    expect(most.byIp.get("127.0.0.1")).toBe(MAX_PER_IP);
    expect(most.byIp.get("127.0.0.2")).toBe(1);
  });

  it("waits the delay after each response before the host's next request", () => {
    const byHost = new Map<string, Served[]>();
    for (const entry of served) byHost.set(entry.hostKey, [...(byHost.get(entry.hostKey) ?? []), entry]);
    let gaps = 0;
    for (const [host, requests] of byHost) {
      for (let i = 1; i < requests.length; i++) {
        const gap = (requests[i] as Served).beganAtMs - (requests[i - 1] as Served).endedAtMs;
        expect(gap, `${host}, request ${i}`).toBeGreaterThanOrEqual(DELAY_MS - TOLERANCE_MS);
        gaps++;
      }
    }
    expect(gaps).toBe(5 * PAGES_PER_HOST);
  });
});
