import { afterEach, describe, expect, it } from "vitest";
import type { ServedRequest } from "../../src/testweb/index.js";
import {
  crawlMetrics,
  logEvent,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, fetchedBy, hostKeyOf, startCluster } from "./cluster-harness.js";

/** Half the hosts on one address (shared hosting); responses take a little time, so requests overlap. */
const SHARED_WEB = { hosts: 40, pages: 2500, seed: 3, responseDelayMs: 5, ipGroups: [{ hosts: 20 }] };
/**
 * The cluster-wide limit under test, and a short whole-fetch deadline: a slot whose release never comes
 * (its agent killed) lasts that long, and so does a crashed authority's grace.
 */
const FLAGS = ["--ip-limit", "cluster", "--max-per-ip", "2", "--fetch-timeout-ms", "4000"];

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

type LogRecord = NonNullable<ReturnType<typeof logEvent>>;

/** Waits for every agent to exit 0; returns their `stopped` records. */
async function waitForExits(agents: readonly ClusterAgent[]): Promise<LogRecord[]> {
  const stopped: LogRecord[] = [];
  for (const agent of agents) {
    const result = await agent.process.waitForExit(120_000);
    expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
    stopped.push(logEvent(result.stderr, "stopped") ?? ({} as LogRecord));
  }
  return stopped;
}

/** The agents that fetched pages of hosts at `ip`. */
async function agentsAt(fixture: WebFixture, agents: readonly ClusterAgent[], ip: string): Promise<string[]> {
  const { model } = fixture.web;
  const atIp = (url: string) =>
    model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1]?.ip === ip;
  const byAgent = await fetchedBy(agents);
  return [...byAgent].filter(([, urls]) => urls.some(atIp)).map(([id]) => id);
}

describe("per-IP politeness across the cluster", () => {
  it("4 agents crawling 20 hosts on one address never have more than --max-per-ip requests at once there", async () => {
    fixture = await startWebFixture(SHARED_WEB);
    const truth = fixture.truth();
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const agents = await startCluster(fixture, 4, FLAGS);
    await waitForExits(agents);

    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(fixture.web.recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
    // The address's hosts were crawled by several agents: the limit held across them.
    expect((await agentsAt(fixture, agents, ip)).length).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it("costs no message per request where each address has one user: a few per address, batched", async () => {
    fixture = await startWebFixture({ hosts: 40, pages: 2500, seed: 3 });
    const truth = fixture.truth();
    const agents = await startCluster(fixture, 4, FLAGS);
    const stopped = await waitForExits(agents);
    expect(crawlMetrics(servedPages(fixture.web.recorder), truth.urls).coverage).toBe(1);
    const messages = stopped.reduce((sum, record) => sum + Number(record.ipMessages ?? 0), 0);
    const addresses = new Set(fixture.web.model.hosts.map((host) => host.ip)).size;
    const pages = truth.urls.length;
    // Without leases it would be one ask a request, and a release: twice the pages, times 3/4.
    expect(messages, `${messages} messages for ${pages} pages at ${addresses} addresses`).toBeLessThan(
      pages * 0.1,
    );
    expect(messages).toBeGreaterThan(0);
  }, 180_000);

  it("holds the limit through a SIGKILL of the address's authority mid-crawl, with full coverage", async () => {
    fixture = await startWebFixture(SHARED_WEB);
    const truth = fixture.truth();
    const recorder = fixture.web.recorder;
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const agents = await startCluster(fixture, 4, FLAGS);
    const assignment = await assignmentOf(agents.map((agent) => agent.id));
    const victim = agents.find((agent) => agent.id === assignment.ownerOfRareKey(ip)) as ClusterAgent;
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 90_000);
    victim.process.kill("SIGKILL");
    await victim.process.waitForExit(10_000).catch(() => undefined);
    const killedAt = servedPages(recorder).size;
    const survivors = agents.filter((agent) => agent !== victim);
    await waitForExits(survivors);

    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(killedAt).toBeLessThan(truth.urls.length);
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
    expect((await agentsAt(fixture, survivors, ip)).length).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it("a 429 answered to one agent holds every agent's requests to that address for its Retry-After", async () => {
    // Six hosts behind an address that takes 5 requests a second, and answers 429 (Retry-After: 1) beyond.
    fixture = await startWebFixture({
      hosts: 24,
      pages: 480,
      seed: 4,
      responseDelayMs: 5,
      ipGroups: [{ hosts: 6, requestsPerSecond: 5 }],
    });
    const truth = fixture.truth();
    const recorder = fixture.web.recorder;
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const trace = traceRequests(recorder);
    const refusedAtMs: number[] = [];
    const refused = recorder.refused.bind(recorder);
    recorder.refused = (request: ServedRequest) => {
      refusedAtMs.push(performance.now());
      refused(request);
    };
    const agents = await startCluster(fixture, 4, [...FLAGS, "--max-fetch-attempts", "10"]);
    await waitForExits(agents);
    trace.stop();

    expect(crawlMetrics(servedPages(recorder), truth.urls).coverage).toBe(1);
    expect(refusedAtMs.length).toBeGreaterThan(0);
    const startsAtIp = trace.requests.filter((request) => request.ip === ip).map((r) => r.beganAtMs);
    // After each refusal, the report reaches the address's authority within a round trip, and requests
    // granted before it start at once: past 250 ms, nothing starts there until the second is over.
    const early = refusedAtMs.flatMap((atMs) =>
      startsAtIp
        .filter((startMs) => startMs > atMs + 250 && startMs < atMs + 950)
        .map((startMs) => startMs - atMs),
    );
    expect(early, `${refusedAtMs.length} refusals of ${startsAtIp.length} requests`).toEqual([]);
    const byAgent = await agentsAt(fixture, agents, ip);
    expect(byAgent.length).toBeGreaterThanOrEqual(2);
    const hostsAtIp = new Set(
      trace.requests.filter((request) => request.ip === ip).map((request) => hostKeyOf(request.url)),
    );
    expect(hostsAtIp.size).toBe(6);
  }, 240_000);
});
