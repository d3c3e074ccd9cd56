import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/index.js";
import { hostKey } from "../../src/url/index.js";
import { inProcessAgentOptions, readCrawlLogOf, startWebFixture, type WebFixture } from "./harness.js";

describe("the host blacklist across a restart", () => {
  let fixture: WebFixture;

  beforeAll(async () => {
    fixture = await startWebFixture({ hosts: 6, pages: 300, seedCount: 1, trap: false });
  });

  afterAll(async () => {
    await fixture?.stop();
  });

  it("is kept in the agent's state: a restarted agent fetches nothing from a host blacklisted before", async () => {
    const truth = fixture.truth();
    const hosts = [...new Set(truth.urls.map(hostKey))].sort();
    const seedHost = hostKey(fixture.web.seeds[0] as string);
    const banned = hosts.find((host) => host !== seedHost) as string;
    const options = inProcessAgentOptions(
      {
        id: "b1",
        dataDir: join(fixture.dir, "b1"),
        seeds: fixture.web.seeds.slice(0, 1),
        hostsFile: fixture.hostsFile,
      },
      // The test web's host whose robots.txt answers 503 is given up quickly.
      { robotsRetryMs: 100, maxRobotsAttempts: 2 },
    );
    const first = await Agent.open(options);
    expect(await first.blacklistHost(banned.split(":")[0] as string)).toBe(true);
    expect(await first.blacklistHost(banned.split(":")[0] as string)).toBe(false);
    await first.stop();

    const second = await Agent.open(options);
    await second.start();
    await second.whenDone();
    await second.stop();
    const fetched = (await readCrawlLogOf(options.dataDir)).map((entry) => hostKey(entry.url));
    expect(fetched.length).toBeGreaterThan(20);
    expect(fetched).not.toContain(banned);
    expect(second.stats.dropped.get("blacklisted") ?? 0).toBeGreaterThan(0);
    // Every other host of the truth was crawled.
    for (const host of hosts.filter((candidate) => candidate !== banned)) expect(fetched).toContain(host);

    const third = await Agent.open(options);
    expect(await third.unblacklistHost(banned)).toBe(false);
    expect(await third.unblacklistHost(banned.split(":")[0] as string)).toBe(true);
    await third.stop();
    const fourth = await Agent.open(options);
    expect(await fourth.unblacklistHost(banned.split(":")[0] as string)).toBe(false);
    await fourth.stop();
  }, 60_000);
});
