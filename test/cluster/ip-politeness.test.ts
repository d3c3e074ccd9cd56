import { afterEach, describe, expect, it } from "vitest";
import { crawlMetrics, servedPages, startWebFixture, type WebFixture, waitFor } from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, startCluster } from "./cluster-harness.js";
import { agentsAt, FLAGS, waitForExits } from "./ip-politeness-harness.js";

/**
 * Half the hosts on one address (shared hosting); responses take a little time, so requests overlap.
 * As few pages as 40 hosts allow (~18 a host, 354 at the shared address): the address's requests, a few
 * a second under the cluster's leases, set the crawl's length (with 2,500 pages, 767 there: ~70 s).
 */
const SHARED_WEB = { hosts: 40, pages: 400, seed: 3, responseDelayMs: 5, ipGroups: [{ hosts: 20 }] };

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

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
});
