import { afterEach, describe, expect, it } from "vitest";
import type { ServedRequest } from "../../src/testweb/index.js";
import {
  crawlMetrics,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
} from "../agent/harness.js";
import { hostKeyOf, startCluster } from "./cluster-harness.js";
import { agentsAt, FLAGS, waitForExits } from "./ip-politeness-harness.js";

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

/**
 * Real agent processes under the cluster-wide limit: a 429 to one holds them all. In the timed tier: it
 * measures how soon requests stop after a refusal.
 */
describe("per-IP politeness across the cluster: a 429", () => {
  it("a 429 answered to one agent holds every agent's requests to that address for its Retry-After", async () => {
    // Six hosts behind an address that takes 10 requests a second, and answers 429 (Retry-After: 1) beyond.
    // The least pages 24 hosts take (10 a host): the crawl lasts as long as the address's URLs take at
    // that rate (131 URLs; 190 with 480 pages), and still meets a dozen refusals, each a hold checked
    // (two dozen at 5 requests a second, in twice the time).
    fixture = await startWebFixture({
      hosts: 24,
      pages: 240,
      seed: 4,
      responseDelayMs: 5,
      ipGroups: [{ hosts: 6, requestsPerSecond: 10 }],
    });
    const truth = fixture.truth();
    const recorder = fixture.web.recorder;
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const trace = traceRequests(recorder);
    // Times in the wall clock's milliseconds, the one the agents' log records carry.
    const wallOffsetMs = Date.now() - performance.now();
    const refusedAtMs: number[] = [];
    const refused = recorder.refused.bind(recorder);
    recorder.refused = (request: ServedRequest) => {
      refusedAtMs.push(Date.now());
      refused(request);
    };
    const agents = await startCluster(fixture, 4, [...FLAGS, "--max-fetch-attempts", "10"]);
    await waitForExits(agents);
    trace.stop();

    expect(crawlMetrics(servedPages(recorder), truth.urls).coverage).toBe(1);
    expect(refusedAtMs.length).toBeGreaterThan(0);
    const requestsAtIp = trace.requests.filter((request) => request.ip === ip);
    // When the address's authority heard of each refusal (its report): the slots it granted before may
    // still start, each within its start slack (100 ms beyond two round trips on loopback); past 250 ms
    // after that, nothing starts there until the second is over.
    const heardAtMs = agents
      .flatMap((agent) => agent.process.records())
      .filter((record) => record.event === "ip-blocked" && record.ip === ip)
      .map((record) => Date.parse(String(record.time)))
      .sort((a, b) => a - b);
    const early = refusedAtMs.flatMap((atMs) => {
      // Wall-clock times in milliseconds on both sides: the report may seem a millisecond early.
      const heard = heardAtMs.find((heardMs) => heardMs >= atMs - 1);
      expect(heard, `the authority's block after the refusal at ${atMs}`).toBeDefined();
      return requestsAtIp
        .map((request) => ({ url: request.url, startMs: request.beganAtMs + wallOffsetMs }))
        .filter(({ startMs }) => startMs > (heard ?? atMs) + 250 && startMs < atMs + 950)
        .map(
          ({ url, startMs }) =>
            `${Math.round(startMs - atMs)} ms after, ${Math.round(startMs - (heard ?? atMs))} ms after it was heard: ${url}`,
        );
    });
    const reportMs = refusedAtMs.map(
      (atMs) => (heardAtMs.find((heardMs) => heardMs >= atMs - 1) ?? atMs) - atMs,
    );
    expect(early, `${refusedAtMs.length} refusals of ${requestsAtIp.length} requests`).toEqual([]);
    console.log(
      `${refusedAtMs.length} refusals of ${requestsAtIp.length} requests at the address; heard by its authority within ${Math.max(...reportMs)} ms`,
    );
    const byAgent = await agentsAt(fixture, agents, ip);
    expect(byAgent.length).toBeGreaterThanOrEqual(2);
    const hostsAtIp = new Set(
      trace.requests.filter((request) => request.ip === ip).map((request) => hostKeyOf(request.url)),
    );
    expect(hostsAtIp.size).toBe(6);
  }, 240_000);
});
