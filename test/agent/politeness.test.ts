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

const RESPONSE_MS = 60;
const FACTOR = 4;
let slow: WebFixture;
let slowTrace: RequestTrace;
let slowRun: ExitResult;

/**
 * The two crawls run at once, each against its own web (two agents, and about ten requests a second
 * between them on this process's loop, where the webs stamp a request's start and end: a loop too busy
 * to stamp an end at once would shorten the gap seen after it).
 */
beforeAll(async () => {
  [fixture, slow] = await Promise.all([
    startWebFixture({ seed: 3, hosts: 5, pages: 50, trap: false }),
    startWebFixture({ seed: 4, hosts: 5, pages: 50, trap: false, responseDelayMs: RESPONSE_MS }),
  ]);
  trace = traceRequests(fixture.web.recorder);
  slowTrace = traceRequests(slow.web.recorder);
  [run, slowRun] = await Promise.all([
    spawnAgent(fixture, { id: "polite", delayMs: DELAY_MS }).waitForExit(),
    spawnAgent(slow, { id: "patient", delayMs: 0, flags: ["--delay-factor", String(FACTOR)] }).waitForExit(
      120_000,
    ),
  ]);
  trace.stop();
  slowTrace.stop();
}, 150_000);

afterAll(async () => {
  await fixture?.stop();
  await slow?.stop();
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

describe(`--delay-factor ${FACTOR} against a server answering in ${RESPONSE_MS} ms`, () => {
  it("waits the factor times each fetch's duration before the host's next request", () => {
    expect(slowRun.code, slowRun.stderr).toBe(0);
    let gaps = 0;
    for (const [host, requests] of byHost(slowTrace.requests)) {
      for (let i = 1; i < requests.length; i++) {
        const previous = requests[i - 1] as TracedRequest;
        const next = requests[i] as TracedRequest;
        // The server took at least RESPONSE_MS (robots.txt too), so the next request waits FACTOR times that.
        const label = `${host}: ${previous.url} → ${next.url}`;
        expect(next.beganAtMs - (previous.endedAtMs as number), label).toBeGreaterThanOrEqual(
          FACTOR * RESPONSE_MS - TOLERANCE_MS,
        );
        gaps++;
      }
    }
    expect(gaps).toBeGreaterThan(10);
  });
});
