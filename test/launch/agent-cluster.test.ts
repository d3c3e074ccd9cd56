import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { AgentCluster, FAST_FAILURE_DETECTION, testWebAgentFlags } from "../../src/launch/index.js";
import { servedPages, startWebFixture, trackUbicrawl, type WebFixture } from "../agent/harness.js";

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

/** Real agent processes on the test web, started and steered by the one orchestrator. */
it("starts agents that join the live ones, waits for their views, seeds, asks and kills them", async () => {
  fixture = await startWebFixture({ hosts: 6, pages: 60, seed: 3 });
  const web = fixture;
  const launched: string[] = [];
  const cluster = new AgentCluster({
    flags: { ...testWebAgentFlags(web.hostsFile), ...FAST_FAILURE_DETECTION, insecure: true },
    dataDirOf: (id) => join(web.dir, id),
    process: { cwd: web.dir },
    onLaunch: (member) => {
      launched.push(member.id);
      trackUbicrawl(member.process, web.dir, member.id);
    },
  });
  const first = await cluster.start("a");
  // The second joins the live agents by default: the first.
  const second = await cluster.start("b");
  expect(first.address).toMatch(/^127\.0\.0\.1:\d+$/);
  expect(second.process.name).toBe("b");
  expect(cluster.liveAddresses()).toEqual([first.address, second.address]);
  await cluster.untilViewsHold(cluster.liveAddresses(), 2, Date.now() + 20_000);

  const truth = web.truth();
  await cluster.addSeeds(first.address, web.web.seeds);
  const deadline = Date.now() + 30_000;
  while (servedPages(web.web.recorder).size < truth.urls.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(servedPages(web.web.recorder).size).toBe(truth.urls.length);
  const stats = await cluster.stats();
  expect(stats.map((agent) => agent.id).sort()).toEqual(["a", "b"]);
  expect(stats.reduce((sum, agent) => sum + agent.pagesFetched, 0)).toBe(truth.urls.length);

  // A restart is a member of its own; the killed one is no longer live.
  first.process.kill("SIGKILL");
  await first.process.exit;
  expect(cluster.live().map((member) => member.id)).toEqual(["b"]);
  const again = await cluster.start("a");
  expect(cluster.latest("a")).toBe(again);
  expect(cluster.members.map((member) => member.id)).toEqual(["a", "b", "a"]);
  expect(launched).toEqual(["a", "b", "a"]);
  expect(again.dataDir).toBe(join(web.dir, "a"));
  await expect(cluster.untilViewsHold([again.address], 3, Date.now())).rejects.toThrow(
    /sees \d of 3 agents alive/,
  );
  // Stopped once both know each other: a leave announced to a view without the restarted agent would
  // leave it pushing its hosts to one gone, for half its leave budget (past the stop's grace, SIGKILLed).
  await cluster.untilViewsHold(cluster.liveAddresses(), 2, Date.now() + 20_000);

  await cluster.stopAll();
  expect(cluster.live()).toEqual([]);
  const exits = await cluster.exits();
  // The first was killed; the others stopped on SIGTERM.
  expect(exits.map((exit) => exit.signal ?? exit.code)).toEqual(["SIGKILL", 0, 0]);
}, 120_000);
