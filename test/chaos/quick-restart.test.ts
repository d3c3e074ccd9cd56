import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSYNCED_PAGES_PER_HOST } from "../../src/agent/index.js";
import type { Truth } from "../../src/testweb/index.js";
import {
  crawlMetrics,
  type ExitResult,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  assignmentOf,
  type ClusterAgent,
  fetchedBy,
  hostKeyOf,
  startCluster,
  startClusterAgent,
} from "../cluster/cluster-harness.js";
import { chaosSeed, randomIntIn, seededRandom } from "./chaos-helpers.js";

/**
 * Agents SIGKILLed and restarted at once on the same address and data (as a supervisor restarts a
 * crashed service), three times over one crawl of a 3-agent cluster. Each comes back before the others
 * suspect it, so no host changes hands: the crawl completes with full coverage, every page is fetched
 * by its owner, and the only pages fetched twice are those in flight at the kills.
 *
 * Run on demand (`QUICK_RESTART_CHAOS=1`, with CHAOS_SEED to replay; about 35 s). It used to fail now
 * and then with ~2,000 refetches: the agent restarted last waited longest for a stable view (the wait
 * now stands only for a suspicion), so it ended
 * last, and a leave announced to it while a heartbeat to it was outstanding was dropped; it took the
 * departed agent for crashed and crawled its hosts again, and from them the others'. Leaves now reach
 * every member (`FailureDetector.leave`): 27 runs in a row were clean since. It prints every agent's
 * log tail when refetches exceed the bound. The default suite checks the same bound on restarts after
 * the others noticed (`cluster-chaos.test.ts`, within the takeover grace).
 */

const WEB = { hosts: 40, pages: 2500, seed: 13, responseDelayMs: 10 };
const MAX_ACTIVE_HOSTS = 6;
/** Suspicion well above a restart's duration on a busy machine: the kills must go unnoticed. */
const FLAGS = [
  ...["--max-active-hosts", String(MAX_ACTIVE_HOSTS)],
  ...["--heartbeat-ms", "300", "--suspect-after-ms", "8000"],
];
const KILL_AT_SHARES = [0.2, 0.45, 0.7];
const SEED = chaosSeed(1254759448);

const RUN = process.env.QUICK_RESTART_CHAOS === "1";

let fixture: WebFixture;
let truth: Truth;
let agents: ClusterAgent[];
let kills = 0;
const exits = new Map<string, ExitResult>();

describe.runIf(RUN)(`a 3-agent cluster whose agents are restarted at once (CHAOS_SEED=${SEED})`, () => {
  beforeAll(async () => {
    process.stderr.write(`quick restarts: CHAOS_SEED=${SEED}\n`);
    const random = seededRandom(SEED);
    fixture = await startWebFixture(WEB);
    truth = fixture.truth();
    const recorder = fixture.web.recorder;
    agents = await startCluster(fixture, 3, FLAGS);
    for (const share of KILL_AT_SHARES) {
      await waitFor(
        () => servedPages(recorder).size >= truth.urls.length * share || agents.some((a) => a.process.exited),
        `${Math.round(share * 100)}% of the crawl`,
        60_000,
      );
      if (agents.some((agent) => agent.process.exited)) break;
      await delay(randomIntIn(random, 0, 300));
      const index = randomIntIn(random, 0, agents.length - 1);
      const victim = agents[index] as ClusterAgent;
      victim.process.kill("SIGKILL");
      await victim.process.waitForExit(10_000);
      kills++;
      agents[index] = await startClusterAgent(fixture, {
        id: victim.id,
        join: agents.filter((agent) => agent !== victim).map((agent) => agent.address),
        flags: [...FLAGS, "--listen", victim.address],
      });
    }
    for (const agent of agents) exits.set(agent.id, await agent.process.waitForExit(90_000));
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    process.stderr.write(
      `quick restarts: ${kills} kills; ${metrics.unique} pages, ${metrics.total - metrics.unique} refetches\n`,
    );
    if (metrics.total - metrics.unique > kills * MAX_ACTIVE_HOSTS) {
      for (const [id, result] of exits) process.stderr.write(`--- ${id}:\n${result.stderr.slice(-3000)}\n`);
    }
  }, 170_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  describe("restarted at once after SIGKILL", () => {
    it("went through the kills, then every agent exited by itself", () => {
      expect(kills).toBeGreaterThanOrEqual(KILL_AT_SHARES.length - 1);
      for (const [id, result] of exits) expect(result.code, `${id}:\n${result.stderr}`).toBe(0);
    });

    it("loses no page, and refetches only what was not durable at the kills", () => {
      const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
      expect(metrics.missing).toEqual([]);
      expect(metrics.extra).toEqual([]);
      // A killed agent had at most UNSYNCED_PAGES_PER_HOST pages not durable per active host; nothing
      // else is fetched again.
      expect(metrics.total - metrics.unique).toBeLessThanOrEqual(
        kills * MAX_ACTIVE_HOSTS * UNSYNCED_PAGES_PER_HOST,
      );
    });

    it("moves no host: every page is fetched by its owner, never two requests at once to a host", async () => {
      const owners = await assignmentOf(agents.map((agent) => agent.id));
      for (const [id, urls] of await fetchedBy(agents)) {
        expect(urls.filter((url) => owners.ownerOf(hostKeyOf(url)) !== id)).toEqual([]);
      }
      expect(fixture.web.recorder.maxConcurrencyPerHost()).toBe(1);
    });
  });
});
