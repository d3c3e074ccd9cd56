import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  type ExitResult,
  type RequestTrace,
  servedPages,
  spawnAgent,
  startWebFixture,
  type TracedRequest,
  traceRequests,
  type WebFixture,
} from "./harness.js";

/** Politeness over real sockets: the delay between requests to one host, robots.txt included. */

const DELAY_MS = 200;
/**
 * Slack for the two clocks involved: the agent measures from the end of a response as it reads it,
 * the test web stamps requests on its own event loop. Only lower bounds are asserted.
 */
const TOLERANCE_MS = 20;

let fixture: WebFixture;
let trace: RequestTrace;
let run: ExitResult;

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 3, hosts: 5, pages: 50, trap: false });
  trace = traceRequests(fixture.web.recorder);
  run = await spawnAgent(fixture, { id: "polite", delayMs: DELAY_MS }).waitForExit();
  trace.stop();
});

afterAll(async () => {
  await fixture?.stop();
});

function byHost(requests: readonly TracedRequest[]): Map<string, TracedRequest[]> {
  const hosts = new Map<string, TracedRequest[]>();
  for (const request of requests) {
    const list = hosts.get(request.host) ?? [];
    list.push(request);
    hosts.set(request.host, list);
  }
  return hosts;
}

describe(`--delay-ms ${DELAY_MS}`, () => {
  it("completes the crawl", () => {
    expect(run.code, run.stderr).toBe(0);
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), fixture.truth().urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
  });

  it("spaces consecutive requests to one host by at least the delay", () => {
    const hosts = byHost(trace.requests);
    let gaps = 0;
    for (const [host, requests] of hosts) {
      for (let i = 1; i < requests.length; i++) {
        const previous = requests[i - 1] as TracedRequest;
        const next = requests[i] as TracedRequest;
        const label = `${host}: ${previous.url} → ${next.url}`;
        expect(previous.endedAtMs, label).toBeDefined();
        expect(next.beganAtMs - (previous.endedAtMs as number), label).toBeGreaterThanOrEqual(
          DELAY_MS - TOLERANCE_MS,
        );
        gaps++;
      }
    }
    // Enough pairs that the check means something: several hosts with many pages each.
    expect(hosts.size).toBeGreaterThanOrEqual(4);
    expect(gaps).toBeGreaterThan(20);
  });
});
