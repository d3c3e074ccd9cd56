import { describe, expect, it } from "vitest";
import type { LogFields } from "../../src/logging/index.js";
import { readCrawlLogSoFar, traceRequests, type WebFixture, waitFor } from "../agent/harness.js";
import { assignmentOf, fetchedBy, hostKeyOf } from "./cluster-harness.js";
import {
  inProcessScope,
  type MemoryCluster,
  type MemoryClusterOptions,
  NO_TAKEOVER,
} from "./memory-cluster-harness.js";

/**
 * The cluster's crawl-wide behaviour on agents in this process (see memory-cluster-harness.ts): the
 * crawl's end and a join mid-crawl, in seconds instead of processes. Each agent ends as its process does
 * with `--exit-when-done` ({@link MemoryCluster.untilDone}). What needs processes — the crawl of 4
 * agents run as the CLI runs them, a SIGKILL and what it loses — is in cluster.test.ts.
 */

const scope = inProcessScope();

/** Starts `agent-1` … `agent-<count>`, each joining those before it, the last with the web's seeds. */
async function startAgents(
  web: WebFixture,
  count: number,
  options: MemoryClusterOptions,
): Promise<{ agents: MemoryCluster; ids: string[] }> {
  const ids = Array.from({ length: count }, (_, i) => `agent-${i + 1}`);
  const agents = scope.cluster(web, options);
  await agents.startAll(ids, web.web.seeds);
  return { agents, ids };
}

/** Runs every agent of `ids` to the crawl's end: each one's `stopped` record and when it stopped. */
function untilAllDone(agents: MemoryCluster, ids: readonly string[]) {
  return Promise.all(
    ids.map(async (id) => ({ id, stopped: await agents.untilDone(id, 90_000), atMs: Date.now() })),
  );
}

/**
 * An id for a newcomer to `ids` that makes it the owner of one of the three largest hosts of `urls`: such
 * a host's crawl outlasts the newcomer's start. Not always the largest: a host right next to a replica
 * of another agent hardly ever moves.
 */
async function idOwningALargeHost(ids: readonly string[], urls: readonly string[]): Promise<string> {
  const pagesByHost = new Map<string, number>();
  for (const url of urls) pagesByHost.set(hostKeyOf(url), (pagesByHost.get(hostKeyOf(url)) ?? 0) + 1);
  const largest = [...pagesByHost]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([host]) => host);
  for (let i = 5; i < 100; i++) {
    const id = `agent-${i}`;
    const assignment = await assignmentOf([...ids, id]);
    if (largest.some((host) => assignment.ownerOf(host) === id)) return id;
  }
  throw new Error(`no id from agent-5 to agent-99 owns one of ${largest.join(", ")}`);
}

describe("a cluster of agents in one process on the test web", () => {
  it("ends a few round trips after the last page, not heartbeat intervals later, and sums up its exchange", async () => {
    const web = await scope.web({ hosts: 12, pages: 400, seed: 5 });
    // Rounds every 3 s alone would see the end 6 s or more after the last page. The politeness delay
    // makes the crawl outlast the view's settling after the joins.
    const options = {
      agent: { delayMs: 150 },
      cluster: { ...NO_TAKEOVER, heartbeatIntervalMs: 3000, suspectAfterMs: 6000 },
    };
    const startedAtMs = Date.now();
    const { agents, ids } = await startAgents(web, 3, options);
    const results = await untilAllDone(agents, ids);
    expect(agents.metrics().coverage).toBe(1);
    const entries = (await Promise.all(ids.map((id) => readCrawlLogSoFar(agents.dataDirOf(id))))).flat();
    const lastPageAtMs = Math.max(...entries.map((entry) => Date.parse(entry.ts)));
    const lastEndAtMs = Math.max(...results.map((result) => result.atMs));
    const lagMs = lastEndAtMs - lastPageAtMs;
    expect(
      lagMs,
      `end ${lagMs} ms after the last page, the crawl took ${lastPageAtMs - startedAtMs} ms`,
    ).toBeLessThan(3000);

    // Every URL one agent says it sent, another says it received.
    // An agent that exchanged nothing has no exchange in its record (on 12 hosts, now and then one owns none).
    const stopped: LogFields[] = results.map((result) => result.stopped);
    const exchange = stopped.map((record) => {
      const traffic = record.exchange as Record<string, number> | undefined;
      return traffic
        ? [traffic.urlsSent, traffic.batchesSent, traffic.urlsReceived, traffic.batchesReceived]
        : [0, 0, 0, 0];
    });
    const sum = (column: number) => exchange.reduce((total, row) => total + (row[column] ?? 0), 0);
    expect(stopped.filter((record) => record.exchange !== undefined).length).toBeGreaterThanOrEqual(2);
    expect(sum(0)).toBeGreaterThan(0);
    expect(sum(0)).toBe(sum(2));
    expect(sum(1)).toBe(sum(3));
    // Links to other agents' hosts repeat URLs (a page is linked from several): each goes out once.
    const links = stopped.map((record) => Number(record.linksToOtherAgents ?? 0));
    const linksTotal = links.reduce((total, count) => total + count, 0);
    expect(linksTotal).toBeGreaterThan(sum(0));
  }, 60_000);

  it("takes in a fifth agent at ~30%: hosts move only to it, with no overlap and full coverage", async () => {
    // Smaller than cluster.test.ts's web, no host over 80 articles, and a longer politeness delay: one
    // process crawls for all five agents here, so the crawl is made long by waits rather than by pages. A
    // newcomer here starts without a process's start, and the crawl still outlasts it.
    const web = await scope.web({
      hosts: 16,
      pages: 450,
      seed: 7,
      responseDelayMs: 4,
      maxArticlesPerHost: 80,
    });
    const truth = web.truth();
    const trace = traceRequests(web.web.recorder);
    const startedAtMs = performance.now();
    // Few hosts at once per agent and a politeness delay: the remaining 70% of the crawl lasts seconds.
    const { agents, ids } = await startAgents(web, 4, {
      agent: { maxActiveHosts: 6, delayMs: 60 },
      cluster: NO_TAKEOVER,
    });
    await waitFor(() => agents.missing().length <= truth.urls.length * 0.7, "30% of the crawl", 30_000);
    const joinedAtMs = performance.now();
    const newcomer = await idOwningALargeHost(ids, truth.urls);
    await agents.start(newcomer, { join: [agents.addressOf("agent-3")] });
    const listeningAtMs = performance.now();
    const all = [...ids, newcomer];
    await untilAllDone(agents, all);
    const logsOf = (of: readonly string[]) => of.map((id) => ({ id, dataDir: agents.dataDirOf(id) }));

    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    // A page fetched twice: say by whom and when (every agent's log lines, every request's timing).
    const explain = async (url: string) => {
      const lines: string[] = [];
      for (const id of all) {
        for (const entry of await readCrawlLogSoFar(agents.dataDirOf(id))) {
          if (entry.url === url) lines.push(`${id} logged ${JSON.stringify(entry)}`);
        }
      }
      const at = (ms: number | undefined) =>
        ms === undefined ? "never" : `${Math.round(ms - startedAtMs)} ms`;
      for (const request of trace.requests.filter((r) => r.url === url)) {
        lines.push(`served from ${at(request.beganAtMs)} to ${at(request.endedAtMs)}`);
      }
      return `${url} (newcomer joined at ${at(joinedAtMs)}):\n  ${lines.join("\n  ")}`;
    };
    const explained = await Promise.all(metrics.repeated.map(explain));
    expect(metrics.repeated, explained.join("\n")).toEqual([]);
    expect(metrics.overlap).toBe(0);

    const before = await assignmentOf(ids);
    const after = await assignmentOf(all);
    const hosts = new Set(truth.urls.map(hostKeyOf));
    for (const host of hosts) {
      // Contravariance: a host either stays with its owner or moves to the newcomer.
      expect([before.ownerOf(host), newcomer]).toContain(after.ownerOf(host));
    }
    const byAgent = await fetchedBy(logsOf(all));
    for (const id of ids) {
      for (const url of byAgent.get(id) ?? []) expect(before.ownerOf(hostKeyOf(url)), url).toBe(id);
    }
    const newcomerUrls = byAgent.get(newcomer) ?? [];
    // None: say when the pages of its hosts were served, against when it was started and listening.
    const itsRequests = trace.requests.filter((r) => after.ownerOf(hostKeyOf(r.url)) === newcomer);
    const atMs = (ms: number) => `${Math.round(ms - startedAtMs)} ms`;
    const servedTimes = itsRequests.map((r) => r.beganAtMs);
    expect(
      newcomerUrls.length,
      `the newcomer, started at ${atMs(joinedAtMs)} and listening at ${atMs(listeningAtMs)}, fetched ` +
        `nothing; its ${itsRequests.length} requests were served from ${atMs(Math.min(...servedTimes))} to ` +
        `${atMs(Math.max(...servedTimes))}, ${servedTimes.filter((t) => t > listeningAtMs).length} after it listened`,
    ).toBeGreaterThan(0);
    for (const url of newcomerUrls) expect(after.ownerOf(hostKeyOf(url)), url).toBe(newcomer);
  }, 60_000);
});
