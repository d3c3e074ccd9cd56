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
    expect(await first.blacklist.add(banned.split(":")[0] as string)).toBe(true);
    expect(await first.blacklist.add(banned.split(":")[0] as string)).toBe(false);
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
    expect(await third.blacklist.remove(banned)).toBe(false);
    // The URLs dropped while it was listed were kept aside, and are queued again now.
    const removal = await third.blacklist.remove(banned.split(":")[0] as string);
    expect(removal).not.toBe(false);
    if (removal === false) return;
    expect(removal.droppedBeforeKeeping).toBe(false);
    expect(removal.restore).toMatchObject({ hosts: 1, sentToOwners: 0, doneMeanwhile: 0, beyondCap: 0 });
    expect(removal.restore.queuedHere).toBe(second.stats.dropped.get("blacklisted"));
    await third.stop();
    const fourth = await Agent.open(options);
    expect(await fourth.blacklist.remove(banned.split(":")[0] as string)).toBe(false);
    await fourth.start();
    await fourth.whenDone();
    await fourth.stop();
    // Every URL of the host in the ground truth is fetched now, each once, and nothing else twice.
    const log = (await readCrawlLogOf(options.dataDir)).map((entry) => entry.url);
    const bannedUrls = truth.urls.filter((url) => hostKey(url) === banned);
    expect(bannedUrls.length).toBeGreaterThan(0);
    for (const url of bannedUrls) expect(log.filter((logged) => logged === url)).toHaveLength(1);
    expect(new Set(log).size).toBe(log.length);
  }, 60_000);

  it("says when a pattern is older than the state's keeping of dropped URLs: those cannot be restored", async () => {
    const options = inProcessAgentOptions({
      id: "b2",
      dataDir: join(fixture.dir, "b2"),
      seeds: [],
      hostsFile: fixture.hostsFile,
    });
    const agent = await Agent.open(options);
    // Added long ago, by an agent whose state did not keep what it dropped.
    await agent.blacklist.merge([{ pattern: "old.test", blocked: true, changedAtMs: 1, changedBy: "b0" }]);
    await agent.blacklist.add("new.test");
    expect(await agent.blacklist.remove("old.test")).toMatchObject({ droppedBeforeKeeping: true });
    expect(await agent.blacklist.remove("new.test")).toMatchObject({ droppedBeforeKeeping: false });
    await agent.stop();
  });
});
