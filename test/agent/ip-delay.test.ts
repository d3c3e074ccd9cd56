import { afterEach, describe, expect, it } from "vitest";
import { crawlMetrics, servedPages, spawnAgent, startWebFixture, type WebFixture } from "./harness.js";

/** `--ip-delay-ms` over real sockets, one agent: starts at one address, whichever of its hosts they are for. */

const IP_DELAY_MS = 200;
/**
 * The agent spaces its requests as it sends them; the test web stamps them as its event loop reads them,
 * later by the connection's set-up (a first request to a host opens one) and its own loop's delays:
 * a gap seen there was up to 41 ms shorter than the one sent on a loaded machine. Only lower bounds are asserted.
 */
const TOLERANCE_MS = 50;
/**
 * Two of eight hosts on one address; answers take a little time, so requests there would overlap. The
 * crawl lasts as long as the address's URLs take at the delay: 46 URLs (9 s) with two hosts there, 69
 * (14 s) with three.
 */
const SHARED_WEB = {
  hosts: 8,
  pages: 80,
  seed: 5,
  responseDelayMs: 5,
  trap: false,
  ipGroups: [{ hosts: 2 }],
};

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

/** Crawls the shared web with `flags`; returns the shortest gap between two request starts the server saw at the shared address. */
async function crawl(delayMs: number, flags: readonly string[]): Promise<number | undefined> {
  fixture = await startWebFixture(SHARED_WEB);
  const ip = fixture.web.model.hosts[0]?.ip as string;
  const run = await spawnAgent(fixture, { id: "ip-delay", delayMs, flags }).waitForExit(120_000);
  expect(run.code, run.stderr).toBe(0);
  const metrics = crawlMetrics(servedPages(fixture.web.recorder), fixture.truth().urls);
  expect(metrics.missing).toEqual([]);
  expect(fixture.web.recorder.maxConcurrencyAtIp(ip)).toBeGreaterThan(0);
  return fixture.web.recorder.minGapAtIp(ip);
}

describe("--ip-delay-ms", () => {
  it("spaces the starts of requests to one address by the IP delay, across its hosts", async () => {
    const gap = await crawl(0, ["--ip-delay-ms", String(IP_DELAY_MS)]);
    expect(gap).toBeGreaterThanOrEqual(IP_DELAY_MS - TOLERANCE_MS);
  }, 120_000);

  it("defaults to the host delay (--delay-ms)", async () => {
    const gap = await crawl(IP_DELAY_MS, []);
    expect(gap).toBeGreaterThanOrEqual(IP_DELAY_MS - TOLERANCE_MS);
  }, 120_000);
});
