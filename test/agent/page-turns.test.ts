import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  type RequestTrace,
  servedPages,
  spawnAgent,
  startWebFixture,
  traceRequests,
  type WebFixture,
} from "./harness.js";

/** The most requests of `trace` in flight at once, any hosts. */
function peakInFlight(trace: RequestTrace): number {
  const events: [number, number][] = [];
  for (const request of trace.requests) {
    events.push([request.beganAtMs, 1], [request.endedAtMs ?? Number.POSITIVE_INFINITY, -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, step] of events) {
    now += step;
    peak = Math.max(peak, now);
  }
  return peak;
}

/**
 * Page turns (src/frontier/page-turns.ts) bound the pages in progress only while the agent's event
 * loop is the bottleneck. On servers that take their time the loop mostly waits, so every active host
 * keeps a request in flight: the turns must never shrink a slow crawl to a handful of requests at once.
 */
describe("page turns on slow servers", () => {
  let fixture: WebFixture;
  let trace: RequestTrace;

  beforeAll(async () => {
    // 40 hosts of 10 pages or so: every host active at once is what is measured, and the biggest host
    // (62 URLs at 150 ms; 175 with 1,200 pages) sets how long the crawl takes.
    fixture = await startWebFixture({ hosts: 40, pages: 400, responseDelayMs: 150 });
    trace = traceRequests(fixture.web.recorder);
  }, 60_000);

  afterAll(async () => {
    trace?.stop();
    await fixture?.stop();
  });

  it("keeps a request in flight on nearly every host at once, and crawls the web whole", async () => {
    const agent = spawnAgent(fixture, { id: "slow", delayMs: 0 });
    const exit = await agent.waitForExit(120_000);
    expect(exit.code, exit.stderr).toBe(0);
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), fixture.truth().urls);
    expect(metrics.coverage).toBe(1);
    // 40 hosts (a few of them dead or failing robots.txt), each at most one request at a time.
    expect(peakInFlight(trace)).toBeGreaterThanOrEqual(25);
  }, 150_000);
});
