import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock.js";
import type { LogRecord } from "../../src/logging/index.js";
import { readCrawlLogSoFar, servedPages, traceRequests, type WebFixture, waitFor } from "../agent/harness.js";
import { hostKeyOf, hostWithMostLeft } from "../cluster/cluster-harness.js";
import { inProcessScope, type MemoryCluster } from "../cluster/memory-cluster-harness.js";
import { SMALL_WEB } from "./ctl-harness.js";
import { crawlEnd, IN_PROCESS_AGENT, memoryCtl, startRecorded } from "./ctl-in-process-harness.js";

/**
 * `ubicrawl ctl blacklist-*` on a running cluster, all in this process (see ctl-in-process-harness.ts):
 * the command's own code against real agents on a MemoryNetwork.
 */
describe("ubicrawl ctl blacklist", () => {
  const scope = inProcessScope();

  /**
   * Starts agents `ids` in order on `web` (each joining the first), the last with the web's seeds, on
   * virtual time (test/support/virtual-time.ts: the politeness delays and the crawl's end pass in turns
   * of the event loop); returns the cluster, each agent's log records and the agents' clock.
   */
  async function startAgents(
    web: WebFixture,
    ids: readonly string[],
  ): Promise<{ agents: MemoryCluster; records: Map<string, LogRecord[]>; clock: Clock }> {
    const { clock } = scope.virtualTime();
    const agents = scope.cluster(web, { agent: IN_PROCESS_AGENT, clock });
    const records = new Map<string, LogRecord[]>();
    for (const id of ids) {
      records.set(
        id,
        await startRecorded(agents, id, { seeds: id === ids[ids.length - 1] ? web.web.seeds : [] }),
      );
    }
    return { agents, records, clock };
  }

  it("blacklists a host on every agent: it gets no request once the command returned", async () => {
    const web = await scope.web(SMALL_WEB);
    const trace = traceRequests(web.web.recorder);
    const { agents } = await startAgents(web, ["agent-1", "agent-2"]);
    const truth = web.truth();
    await waitFor(() => web.web.recorder.totalServed > 200, "200 pages served", 30_000);
    const { host, remaining } = hostWithMostLeft(servedPages(web.web.recorder), truth.urls);
    expect(remaining).toBeGreaterThan(20);

    const done = await memoryCtl(agents, "agent-2", "--cluster", "blacklist-add", host);
    const returnedAt = performance.now();
    expect(done.code, done.stdout).toBe(0);
    expect(done.stdout.match(/blacklisted/g)).toHaveLength(2);
    // Each agent lists it, and another pattern given to one agent only (it spreads it to the other).
    expect((await memoryCtl(agents, "agent-1", "blacklist-add", "*.elsewhere.test")).code).toBe(0);
    const listed = await memoryCtl(agents, "agent-2", "--cluster", "blacklist-list");
    expect(listed.code, listed.stdout).toBe(0);
    expect(listed.stdout.trim().split("\n").sort()).toEqual(
      [
        `agent-1 (${agents.addressOf("agent-1")}): blacklist: *.elsewhere.test, ${host}`,
        `agent-2 (${agents.addressOf("agent-2")}): blacklist: *.elsewhere.test, ${host}`,
      ].sort(),
    );
    // The crawl ends (where each agent's process would exit).
    await crawlEnd(agents, 60_000);
    trace.stop();
    const late = trace.requests.filter((request) => request.host === host && request.beganAtMs > returnedAt);
    expect(late, `requests to ${host} after the blacklist`).toEqual([]);
    expect(trace.requests.some((request) => request.beganAtMs > returnedAt)).toBe(true);
  });

  it("spreads a blacklist change made at one agent to the others, and to an agent that joins later", async () => {
    const web = await scope.web(SMALL_WEB);
    const { agents, records, clock } = await startAgents(web, ["agent-1", "agent-2"]);
    await waitFor(() => web.web.recorder.totalServed > 100, "100 pages served", 30_000);
    const [host] = [...new Set(web.truth().urls.map(hostKeyOf))].sort();
    // Told to one agent only (no --cluster): it pushes the change to the other before answering.
    const added = await memoryCtl(agents, "agent-1", "blacklist-add", host as string);
    expect(added.code, added.stdout).toBe(0);
    const listOf = async (id: string) => (await memoryCtl(agents, id, "blacklist-list")).stdout.trim();
    expect(await listOf("agent-2")).toBe(`${agents.addressOf("agent-2")}: blacklist: ${host}`);
    // A third agent joins afterwards: it pulls the blacklist at its join, before it fetches anything.
    await agents.start("agent-3");
    expect(await listOf("agent-3")).toBe(`${agents.addressOf("agent-3")}: blacklist: ${host}`);
    // The others saw it join.
    expect(
      (records.get("agent-1") ?? [])
        .filter((record) => record.event === "agent-joined")
        .map((record) => record.peer),
    ).toContain("agent-3");
    // A removal at the newcomer reaches the others; removing it again changes nothing and is no error.
    // The crawl log's times are the agents' clock's.
    const removedAtMs = clock.now();
    expect((await memoryCtl(agents, "agent-3", "blacklist-remove", host as string)).code).toBe(0);
    const again = await memoryCtl(agents, "agent-1", "blacklist-remove", host as string);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${host} was not blacklisted`);
    expect(await listOf("agent-1")).toBe(`${agents.addressOf("agent-1")}: blacklist: (empty)`);
    expect(await listOf("agent-2")).toBe(`${agents.addressOf("agent-2")}: blacklist: (empty)`);
    await crawlEnd(agents, 60_000);
    // Stopped, as the agents' processes would be: every crawl log line is written.
    await agents.stopAll();
    const blacklistedFetches = (await readCrawlLogSoFar(agents.dataDirOf("agent-3"))).filter(
      (entry) => hostKeyOf(entry.url) === host && Date.parse(entry.ts) < removedAtMs,
    );
    expect(blacklistedFetches).toEqual([]);
  });
});
