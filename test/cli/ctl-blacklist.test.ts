import { afterEach, describe, expect, it } from "vitest";
import {
  logRecords,
  readCrawlLogSoFar,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  type ClusterAgent,
  hostKeyOf,
  hostWithMostLeft,
  startCluster,
  startClusterAgent,
} from "../cluster/cluster-harness.js";
import { AGENT_FLAGS, ctl, STEERABLE } from "./ctl-harness.js";

/** `ubicrawl ctl blacklist-*` on a running cluster (apart from ctl-command.test.ts, to run beside it). */
describe("ubicrawl ctl blacklist", () => {
  let fixture: WebFixture | undefined;

  afterEach(async () => {
    await fixture?.stop();
    fixture = undefined;
  });

  it("blacklists a host on every agent: it gets no request once the command returned", async () => {
    fixture = await startWebFixture(STEERABLE);
    const trace = traceRequests(fixture.web.recorder);
    const agents = await startCluster(fixture, 2, AGENT_FLAGS);
    const truth = fixture.truth();
    await waitFor(
      () => fixture !== undefined && fixture.web.recorder.totalServed > 200,
      "200 pages served",
      30_000,
    );
    const { host, remaining } = hostWithMostLeft(servedPages(fixture.web.recorder), truth.urls);
    expect(remaining).toBeGreaterThan(20);

    const done = await ctl(agents[1] as ClusterAgent, "--cluster", "blacklist-add", host);
    const returnedAt = performance.now();
    expect(done.code, done.stdout).toBe(0);
    expect(done.stdout.match(/blacklisted/g)).toHaveLength(2);
    // Each agent lists it, and another pattern given to one agent only (it spreads it to the other).
    expect((await ctl(agents[0] as ClusterAgent, "blacklist-add", "*.elsewhere.test")).code).toBe(0);
    const listed = await ctl(agents[1] as ClusterAgent, "--cluster", "blacklist-list");
    expect(listed.code, listed.stdout).toBe(0);
    expect(listed.stdout.trim().split("\n").sort()).toEqual(
      [
        `agent-1 (${agents[0]?.address}): blacklist: *.elsewhere.test, ${host}`,
        `agent-2 (${agents[1]?.address}): blacklist: *.elsewhere.test, ${host}`,
      ].sort(),
    );
    for (const agent of agents) expect((await agent.process.waitForExit(90_000)).code).toBe(0);
    trace.stop();
    const late = trace.requests.filter((request) => request.host === host && request.beganAtMs > returnedAt);
    expect(late, `requests to ${host} after the blacklist`).toEqual([]);
    expect(trace.requests.some((request) => request.beganAtMs > returnedAt)).toBe(true);
  }, 180_000);

  it("spreads a blacklist change made at one agent to the others, and to an agent that joins later", async () => {
    fixture = await startWebFixture(STEERABLE);
    const agents = await startCluster(fixture, 2, AGENT_FLAGS);
    const [first, second] = agents as [ClusterAgent, ClusterAgent];
    await waitFor(
      () => fixture !== undefined && fixture.web.recorder.totalServed > 100,
      "100 pages served",
      30_000,
    );
    const [host] = [...new Set(fixture.truth().urls.map(hostKeyOf))].sort();
    // Told to one agent only (no --cluster): it pushes the change to the other before answering.
    const added = await ctl(first, "blacklist-add", host as string);
    expect(added.code, added.stdout).toBe(0);
    const listOf = async (agent: ClusterAgent) => (await ctl(agent, "blacklist-list")).stdout.trim();
    expect(await listOf(second)).toBe(`${second.address}: blacklist: ${host}`);
    // A third agent joins afterwards: it pulls the blacklist at its join, before it fetches anything.
    const third = await startClusterAgent(fixture, {
      id: "agent-3",
      join: [first.address],
      flags: AGENT_FLAGS,
    });
    expect(await listOf(third)).toBe(`${third.address}: blacklist: ${host}`);
    // The others saw it join.
    expect(
      logRecords(first.process.stderr())
        .filter((record) => record.event === "agent-joined")
        .map((r) => r.peer),
    ).toContain("agent-3");
    // A removal at the newcomer reaches the others; removing it again changes nothing and is no error.
    const removedAtMs = Date.now();
    expect((await ctl(third, "blacklist-remove", host as string)).code).toBe(0);
    const again = await ctl(first, "blacklist-remove", host as string);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${host} was not blacklisted`);
    expect(await listOf(first)).toBe(`${first.address}: blacklist: (empty)`);
    expect(await listOf(second)).toBe(`${second.address}: blacklist: (empty)`);
    for (const agent of [first, second, third])
      expect((await agent.process.waitForExit(90_000)).code).toBe(0);
    const blacklistedFetches = (await readCrawlLogSoFar(third.dataDir)).filter(
      (entry) => hostKeyOf(entry.url) === host && Date.parse(entry.ts) < removedAtMs,
    );
    expect(blacklistedFetches).toEqual([]);
  }, 180_000);
});
