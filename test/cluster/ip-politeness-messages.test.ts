import { afterEach, describe, expect, it } from "vitest";
import { IP_LEASE_TTL_MS } from "../../src/cluster/ip-authority.js";
import { crawlMetrics, servedPages, startWebFixture, type WebFixture } from "../agent/harness.js";
import { startCluster } from "./cluster-harness.js";
import { FLAGS, waitForExits } from "./ip-politeness-harness.js";

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

/**
 * What the cluster-wide limit costs in messages, with real agent processes: a crawl at full speed on
 * two CPUs keeps the lease renewals (one per half lease, whatever the pages) few. In one process the
 * same crawl takes longer, and its renewals with it.
 */
describe("per-IP politeness across the cluster: its messages", () => {
  it("costs no message per request where each address has one user: a few per address, batched", async () => {
    fixture = await startWebFixture({ hosts: 40, pages: 2500, seed: 3 });
    const truth = fixture.truth();
    const agents = await startCluster(fixture, 4, FLAGS);
    const stopped = await waitForExits(agents);
    expect(crawlMetrics(servedPages(fixture.web.recorder), truth.urls).coverage).toBe(1);
    const messages = stopped.reduce((sum, record) => sum + Number(record.ipMessages ?? 0), 0);
    const addresses = new Set(fixture.web.model.hosts.map((host) => host.ip)).size;
    const pages = truth.urls.length;
    // Without leases it would be one ask a request, and a release: twice the pages, times 3/4. With them,
    // an address's first ask, and renewals: at half a lease, an agent's leases at one authority together,
    // so a crawl slowed by a loaded machine renews more (its seconds allow for them), whatever its pages.
    const renewals = stopped.reduce(
      (sum, record) => sum + Math.ceil(Number(record.seconds) / (IP_LEASE_TTL_MS / 2000)) * agents.length,
      0,
    );
    const seconds = stopped.map((record) => Number(record.seconds).toFixed(1)).join(", ");
    // The web puts two hosts on one address: when agents contend for it, each request there waits in its
    // line at the authority and gives its slot back at once (two messages), as the limit requires.
    const hostsAt = new Map<string, number>();
    for (const host of fixture.web.model.hosts) hostsAt.set(host.ip, (hostsAt.get(host.ip) ?? 0) + 1);
    const sharedHosts = new Set(
      fixture.web.model.hosts.filter((host) => (hostsAt.get(host.ip) ?? 0) > 1).map((host) => host.name),
    );
    const sharedPages = truth.urls.filter((url) => sharedHosts.has(new URL(url).hostname)).length;
    console.log(
      `${messages} messages for ${pages} pages at ${addresses} addresses (${sharedPages} at a shared one); ${renewals} renewals in ${seconds} s`,
    );
    expect(
      messages,
      `${messages} messages for ${pages} pages at ${addresses} addresses (${sharedPages} at a shared one), crawls of ${seconds} s`,
    ).toBeLessThan(pages * 0.05 + renewals + 2 * sharedPages);
    expect(messages).toBeGreaterThan(0);
  }, 180_000);
});
