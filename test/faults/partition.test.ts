import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Truth } from "../../src/testweb/index.js";
import {
  crawlMetrics,
  type ExitResult,
  overlappingRequests,
  type RequestTrace,
  servedPages,
  startWebFixture,
  type TracedRequest,
  traceRequests,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { assignmentOf, fetchedBy, hostKeyOf } from "../cluster/cluster-harness.js";
import {
  aliveSeenBy,
  heal,
  type ProxiedAgent,
  partition,
  startProxiedCluster,
  stopProxies,
  viewsConverged,
  waitForExits,
} from "./proxied-cluster.js";

/**
 * A 2|1 partition of a three-agent cluster whose agents reach each other only through fault proxies:
 * agent-3's ingress and egress are cut for a while, then healed. Both sides suspect each other, the
 * majority takes agent-3's hosts, views converge after healing, no URL is lost, and once views agree no
 * host sees two requests at once.
 */

const WEB = { hosts: 30, pages: 2400, seed: 23, responseDelayMs: 8 };
/**
 * A politeness delay keeps the crawl going past the split, the healing and the settling (several
 * seconds), so requests remain to check once views agree.
 */
const FLAGS = ["--max-active-hosts", "4", "--delay-ms", "10"];
/** The partition starts once this share of the truth has been served. */
const PARTITION_AT_SHARE = 0.12;
/** How long the sides crawl apart once both noticed the split. */
const APART_MS = 1500;
/**
 * After views agree, a loser may still finish the fetch it had begun (and the new owner's re-examination
 * takes a moment): requests beginning this long after convergence are checked for overlap.
 */
const SETTLE_MS = 1500;

let fixture: WebFixture;
let truth: Truth;
let trace: RequestTrace;
let agents: ProxiedAgent[];
let exits = new Map<string, ExitResult>();
let splitSeen: { majorityView: string[][]; minorityView: string[] } | undefined;
let convergedAtMs = 0;
let partitionedAtMs = 0;
let healedAtMs = 0;

beforeAll(async () => {
  fixture = await startWebFixture(WEB);
  truth = fixture.truth();
  trace = traceRequests(fixture.web.recorder);
  agents = await startProxiedCluster(fixture, 3, FLAGS);
  const [a1, a2, a3] = agents as [ProxiedAgent, ProxiedAgent, ProxiedAgent];
  await waitFor(
    () => servedPages(fixture.web.recorder).size >= truth.urls.length * PARTITION_AT_SHARE,
    "the crawl to get going",
    30_000,
  );
  partitionedAtMs = performance.now();
  partition(a3);
  await waitFor(
    async () => {
      const [v1, v2, v3] = await Promise.all([a1, a2, a3].map(aliveSeenBy));
      const split =
        v1?.join() === "agent-1,agent-2" && v2?.join() === "agent-1,agent-2" && v3?.join() === "agent-3";
      if (split) splitSeen = { majorityView: [v1 ?? [], v2 ?? []], minorityView: v3 ?? [] };
      return split;
    },
    "both sides to suspect each other",
    15_000,
    50,
  );
  // Apart until the majority has fetched a page of agent-3's hosts (its claims on them must first give
  // up on agent-3, which takes longer on a loaded machine), then a while more.
  const owners = await assignmentOf(["agent-1", "agent-2", "agent-3"]);
  await waitFor(
    async () => (await majorityTook(owners)).length > 0,
    "the majority to fetch a page of agent-3's hosts while apart",
    20_000,
    100,
  );
  await delay(APART_MS);
  healedAtMs = performance.now();
  heal(a3);
  await waitFor(() => viewsConverged(agents), "views to converge after healing", 20_000, 50);
  convergedAtMs = performance.now();
  exits = await waitForExits(agents);
  trace.stop();
}, 120_000);

/** Pages of agent-3's hosts (in a view of all three) that agent-1 or agent-2 fetched. */
async function majorityTook(owners: Awaited<ReturnType<typeof assignmentOf>>): Promise<string[]> {
  const byAgent = await fetchedBy(agents);
  return [...(byAgent.get("agent-1") ?? []), ...(byAgent.get("agent-2") ?? [])].filter(
    (url) => owners.ownerOf(hostKeyOf(url)) === "agent-3",
  );
}

afterAll(async () => {
  if (agents) await stopProxies(agents);
  await fixture?.stop();
});

describe("a 2|1 partition through fault proxies", () => {
  it("is seen by both sides", () => {
    expect(splitSeen?.majorityView).toEqual([
      ["agent-1", "agent-2"],
      ["agent-1", "agent-2"],
    ]);
    expect(splitSeen?.minorityView).toEqual(["agent-3"]);
    // The partition really cut links: connections were reset on both of agent-3's proxies.
    const a3 = agents[2] as ProxiedAgent;
    expect(a3.ingress.counters.cut).toBeGreaterThan(0);
    expect(a3.egress.counters.cut).toBeGreaterThan(0);
  });

  it("lets the majority take the minority's hosts while apart", async () => {
    const taken = await majorityTook(await assignmentOf(["agent-1", "agent-2", "agent-3"]));
    expect(taken.length).toBeGreaterThan(0);
  });

  it("converges after healing and completes the crawl without losing a URL", () => {
    for (const agent of agents) {
      expect(exits.get(agent.id)?.code, `${agent.id}:\n${exits.get(agent.id)?.stderr.slice(-2000)}`).toBe(0);
    }
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(metrics.extra).toEqual([]);
    const overall = fixture.web.recorder.maxConcurrencyPerHost();
    const concurrentHosts = fixture.web.recorder.hostsWithConcurrentRequests();
    process.stderr.write(
      `partition: split ${Math.round(healedAtMs - partitionedAtMs)} ms, converged ` +
        `${Math.round(convergedAtMs - healedAtMs)} ms after healing; overlap ${metrics.overlap.toFixed(3)} ` +
        `(${metrics.repeated.length} pages fetched twice); max concurrency per host overall ${overall}` +
        ` (${concurrentHosts.length} hosts); ${requestsAfterSettling().length} requests checked after views agreed\n`,
    );
  });

  it("never has two requests at once on a host once views agree", () => {
    const after = requestsAfterSettling();
    expect(after.length).toBeGreaterThan(0);
    expect(overlappingRequests(after).map(([a, b]) => `${a.url} & ${b.url}`)).toEqual([]);
  });
});

/** Requests that began once views had agreed for {@link SETTLE_MS}. */
function requestsAfterSettling(): TracedRequest[] {
  return trace.requests.filter((request) => request.beganAtMs >= convergedAtMs + SETTLE_MS);
}
