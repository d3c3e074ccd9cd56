import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  logEvent,
  readCrawlLogSoFar,
  runUbicrawl,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  type ClusterAgent,
  clusterStats,
  FAST_HEARTBEAT,
  startCluster,
  startClusterAgent,
} from "./cluster-harness.js";

/**
 * What only real agent processes over real gRPC show of membership changes: SIGTERM as a graceful leave
 * (the process's exit and what it says), a restart whose `--join` agents are down rejoining through
 * the agents its data dir remembers (the agent command's choice of seeds), and the agent command's
 * refusal of a live agent's id. The membership changes themselves (joins, leaves, crashes, restarts,
 * retries across owners, an id taken back) and what they waste are tested in process, in seconds, in
 * membership-in-process.test.ts.
 */

/** A small web whose responses take a little time. */
const WEB = { hosts: 12, pages: 400, seed: 11, responseDelayMs: 4 };
/** Few hosts at once and a small politeness delay: the crawl outlasts the leave and the restart. */
const SLOW = ["--max-active-hosts", "6", "--delay-ms", "30"];
/** No agent dies for good here: a dead or falsely suspected one keeps its hosts for a while. */
const NO_TAKEOVER = ["--takeover-delay-ms", "10000"];
const FLAGS = [...SLOW, ...NO_TAKEOVER];
/**
 * The rejoin case's time: after its two SIGKILLs, under the cluster's IP limit, the dead processes'
 * addresses wait out their requests (a lease and a fetch's time) unless the restarts are seen first,
 * and the crawl's end waits on them. On a loaded machine (a clean-clone CI run) it took over the
 * default 60 s; its own waits allow 90 s an agent's exit.
 */
const REJOIN_TIMEOUT_MS = 120_000;

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

async function waitForExits(agents: readonly ClusterAgent[]): Promise<void> {
  for (const agent of agents) {
    const result = await agent.process.waitForExit(90_000);
    expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
  }
}

describe("membership changes", () => {
  it("SIGTERM is a graceful leave: exit 0 within the leave timeout, saying it handed its hosts over and how many pages it fetched", async () => {
    fixture = await startWebFixture(WEB);
    const recorder = fixture.web.recorder;
    const truth = fixture.truth();
    const [, leaver] = (await startCluster(fixture, 2, FLAGS)) as [ClusterAgent, ClusterAgent];
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 30_000);
    const before = (await readCrawlLogSoFar(leaver.dataDir)).filter((entry) => entry.status > 0).length;
    expect(before, "the leaver crawled before its leave").toBeGreaterThan(0);
    expect(servedPages(recorder).size, "pages left at the leave").toBeLessThan(truth.urls.length);
    const signalledAt = performance.now();
    leaver.process.kill("SIGTERM");
    const exit = await leaver.process.waitForExit(30_000);
    expect(exit.code, exit.stderr).toBe(0);
    // Within its leave timeout (the default, 20 s), and saying what it handed over.
    expect(performance.now() - signalledAt).toBeLessThan(20_000 + 2_000);
    expect(exit.stderr).toMatch(/left: [1-9]\d* hosts handed over/);
    expect(exit.stderr).not.toMatch(/not in time/);
    // Its summary's count of pages is its crawl log's fetches (in process, the count is checked across
    // a leave and a return).
    const since = Number(/(\d+) since the crawl began/.exec(exit.stderr)?.[1]);
    const logged = (await readCrawlLogSoFar(leaver.dataDir)).filter((entry) => entry.status > 0).length;
    expect(since, exit.stderr).toBe(logged);
  });
});

describe("a restart whose --join agents are down", () => {
  it(
    "rejoins through the agents its data dir remembers, with or without --join, and the crawl completes",
    async () => {
      fixture = await startWebFixture(WEB);
      const recorder = fixture.web.recorder;
      const truth = fixture.truth();
      const [first, second, third] = (await startCluster(fixture, 3, FLAGS)) as [
        ClusterAgent,
        ClusterAgent,
        ClusterAgent,
      ];
      await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
      first.process.kill("SIGKILL");
      second.process.kill("SIGKILL");
      await first.process.waitForExit(10_000);
      await second.process.waitForExit(10_000);
      // The second joined through the first, which is down: it comes back through the third it remembers.
      const secondBack = await startClusterAgent(fixture, {
        id: second.id,
        join: [first.address],
        flags: FLAGS,
      });
      expect(logEvent(secondBack.process.stderr(), "rejoin-remembered")).toMatchObject({
        remembered: expect.arrayContaining([third.address]),
      });
      // The first started the cluster (no --join): back, it joins the agents it remembers, not a cluster of its own.
      const firstBack = await startClusterAgent(fixture, { id: first.id, flags: FLAGS });
      expect(logEvent(firstBack.process.stderr(), "rejoin-remembered")).toBeDefined();
      await waitFor(
        async () => {
          const own = (await clusterStats(third.address)).find((agent) => agent.id === third.id);
          return [first.id, second.id].every(
            (id) => own?.view.find((peer) => peer.id === id)?.status === "ALIVE",
          );
        },
        "the third to see both back",
        20_000,
      );
      await waitForExits([firstBack, secondBack, third]);
      expect(crawlMetrics(servedPages(recorder), truth.urls).missing).toEqual([]);
    },
    REJOIN_TIMEOUT_MS,
  );
});

describe("an agent's id", () => {
  it("of a live agent is refused to another, saying so, once it is clear it is no earlier life", async () => {
    fixture = await startWebFixture({ hosts: 5, pages: 50, seed: 3 });
    // No seeds: it waits for work, alive, while another agent claims its id.
    const first = await startClusterAgent(fixture, { id: "agent-1", flags: FLAGS });
    const twin = runUbicrawl([
      "agent",
      "--id",
      first.id,
      "--data",
      join(fixture.dir, "twin"),
      "--listen",
      "127.0.0.1:0",
      "--join",
      first.address,
      "--insecure",
      ...FAST_HEARTBEAT,
    ]);
    const result = await twin.waitForExit(30_000);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/is already used by a live agent at .*; choose another agent id/);
    expect(logEvent(result.stderr, "failed")).toMatchObject({ level: "fatal", code: "UBI_ERR_ID_CONFLICT" });
    first.process.kill("SIGTERM");
    await first.process.waitForExit(30_000);
  });
});
