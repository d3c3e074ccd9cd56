import { afterEach, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  logRecords,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  assignmentOf,
  type ClusterAgent,
  hostKeyOf,
  hostWithMostLeft,
  startCluster,
} from "../cluster/cluster-harness.js";
import { ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl ctl` against a running agent, in plaintext: the command's code in this process, over gRPC
 * to the agent's process (ctl's own process: ctl-command.test.ts).
 */
async function ctl(agent: ClusterAgent, ...args: string[]): Promise<{ code: number; stdout: string }> {
  const { code, stdout, stderr } = await ubicrawlInProcess([
    "ctl",
    "--agent",
    agent.address,
    "--insecure",
    ...args,
  ]);
  return { code, stdout: stdout + stderr };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("ubicrawl ctl blacklist-remove", () => {
  let fixture: WebFixture | undefined;

  afterEach(async () => {
    await fixture?.stop();
    fixture = undefined;
  });

  it("brings a host back: every URL of it dropped while listed is fetched after the removal, once", async () => {
    // No host over 100 articles (~130 URLs): a ~15 s crawl, 5 times what the commands (run in this
    // process) and the wait between them take on a loaded machine (the blacklisted host is the one with
    // most left, so it sets the crawl's end; the next largest, nearly as large, keeps it running meanwhile).
    fixture = await startWebFixture({ hosts: 20, pages: 750, responseDelayMs: 5, maxArticlesPerHost: 100 });
    // Both agents stay in each other's view throughout: the test's failure detection (1.2 s) can take
    // a stalled agent for dead on a loaded machine, and the other then owns (and answers for) its hosts.
    const agents = await startCluster(fixture, 2, ["--delay-ms", "100", "--suspect-after-ms", "10000"]);
    const [first, second] = agents as [ClusterAgent, ClusterAgent];
    const truth = fixture.truth();
    await waitFor(
      () => fixture !== undefined && fixture.web.recorder.totalServed > 100,
      "100 pages served",
      30_000,
    );
    const { host, remaining } = hostWithMostLeft(servedPages(fixture.web.recorder), truth.urls);
    expect(remaining).toBeGreaterThan(20);

    const added = await ctl(first, "blacklist-add", host);
    expect(added.code, added.stdout).toBe(0);
    // Its queued URLs are dropped at its owner's next visit, and links to it found meanwhile too.
    await sleep(1500);
    const servedListed = fixture.web.recorder.totalServed;
    const removed = await ctl(second, "blacklist-remove", host);
    expect(removed.code, removed.stdout).toBe(0);
    // What came back, here or at the host's owner, and nothing it could not restore.
    const counts = [...removed.stdout.matchAll(/(\d+) URLs? dropped while listed queued again/g)].map((m) =>
      Number(m[1]),
    );
    expect(removed.stdout).toContain(`unblacklisted ${host}: `);
    expect(
      counts.reduce((a, b) => a + b, 0),
      removed.stdout,
    ).toBeGreaterThan(0);
    expect(removed.stdout).not.toMatch(/cannot be restored/);
    expect(fixture.web.recorder.totalServed, "the crawl still running at the removal").toBeGreaterThan(
      servedListed,
    );

    // A URL fetched already, forced through the agent that does not own it: relayed to its owner,
    // which says so and does not fetch it again.
    const seed = fixture.web.seeds[0] as string;
    const owner = (await assignmentOf(agents.map((agent) => agent.id))).ownerOf(hostKeyOf(seed));
    const other = agents.find((agent) => agent.id !== owner) as ClusterAgent;
    const forced = await ctl(other, "--force", "add-seeds", seed);
    expect(forced.code, forced.stdout).toBe(0);
    expect(forced.stdout).toContain(
      `${seed}: done already (fetched, or failed for good): not fetched again (at ${owner})`,
    );
    expect((await ctl(first, "--force", "pause")).code).toBe(2);

    for (const agent of agents) expect((await agent.process.waitForExit(120_000)).code).toBe(0);
    // The whole web, the host's pages included, each fetched once.
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
    const hostUrls = truth.urls.filter((url) => hostKeyOf(url) === host);
    const pages = servedPages(fixture.web.recorder);
    for (const url of hostUrls) expect(pages.get(url), url).toBe(1);
    // The owner logged what it gave back.
    const restoredEvents = agents.flatMap((agent) =>
      logRecords(agent.process.stderr()).filter((record) => record.event === "blacklist-restored"),
    );
    expect(restoredEvents.map((record) => record.host)).toContain(host);
  }, 180_000);
});
