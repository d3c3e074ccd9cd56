import { beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { Assignment, type Hasher64, loadHasher64 } from "../../src/hashing/index.js";
import { ownHomePages, truthLimits } from "../../src/lab/crawl-metrics.js";
import { nonNegativeLeastSquares } from "../../src/lab/simulation/calibration.js";
import { EventQueue } from "../../src/lab/simulation/event-queue.js";
import {
  AGENT_SETTINGS,
  MEASURED_HEARTBEAT_COSTS,
  type SimulationSettings,
  type SimulationTiming,
} from "../../src/lab/simulation/parameters.js";
import {
  type SimulationSpec,
  simulateCrawl,
  steadyRate,
} from "../../src/lab/simulation/simulated-cluster.js";
import { buildModel, computeTruth, type LinkGraph } from "../../src/testweb/index.js";
import { hostKey } from "../../src/url/index.js";

const PORT = 8080;
const SETTINGS: SimulationSettings = {
  ...AGENT_SETTINGS,
  delayMs: 0,
  heartbeatMs: 200,
  suspectAfterMs: 1200,
};
const TIMING: SimulationTiming = {
  fetchMs: [1, 2, 3, 5],
  cpuMsPerPage: 0.5,
  cpuMsPerAgentSecond: 0,
  cpuMsPerUrlReceived: 0.01,
  latencyMs: 0.1,
  ...MEASURED_HEARTBEAT_COSTS,
};

let hasher: Hasher64;
const model = buildModel({ seed: 3, hosts: 60, pages: 3000 });
/** Each agent count's seeds (home pages of its own hosts) and the link graph they reach. */
const webs = new Map<number, { graph: LinkGraph; seeds: Map<string, string[]>; assignment: Assignment }>();

beforeAll(async () => {
  hasher = await loadHasher64();
});

function webFor(agents: number) {
  let web = webs.get(agents);
  if (!web) {
    const assignment = Assignment.build(
      Array.from({ length: agents }, (_, i) => ({ id: `agent-${i + 1}` })),
      {},
      hasher,
    );
    const pick = ownHomePages({ model, port: PORT }, 1, hasher);
    const seeds = new Map(
      assignment.agents.map(({ id }) => [id, pick(id, (url) => assignment.ownerOf(hostKey(url)))]),
    );
    const graph = computeTruth(model, PORT, truthLimits(), [...seeds.values()].flat(), { linkGraph: true })
      .linkGraph as LinkGraph;
    web = { graph, seeds, assignment };
    webs.set(agents, web);
  }
  return web;
}

function spec(agents: number, more: Partial<SimulationSpec> = {}): SimulationSpec {
  const { graph, seeds } = webFor(agents);
  return {
    graph,
    agents,
    seedsOf: (id) => seeds.get(id) ?? [],
    settings: SETTINGS,
    timing: TIMING,
    hasher,
    ...more,
  };
}

/**
 * URLs the exchange sends in a crawl without faults, counted from the graph alone: each agent sends
 * each URL of another agent's host once, whatever pages of its own hosts link to it.
 */
function expectedUrlsSent(agents: number): number {
  const { graph, assignment } = webFor(agents);
  const owner = (node: number) => assignment.ownerOf(hostKey(graph.urls[node] as string));
  const sent = new Map<string, Set<number>>();
  for (let page = 0; page < graph.fetchedCount; page++) {
    const from = owner(page);
    for (let i = graph.linkStart[page] as number; i < (graph.linkStart[page + 1] as number); i++) {
      const target = graph.linkTargets[i] as number;
      if (owner(target) === from) continue;
      let set = sent.get(from);
      if (!set) {
        set = new Set();
        sent.set(from, set);
      }
      set.add(target);
    }
  }
  return [...sent.values()].reduce((sum, set) => sum + set.size, 0);
}

describe("simulateCrawl", () => {
  it("covers the web with no page fetched twice, and sends each URL once per agent that finds it", () => {
    for (const agents of [1, 2, 5, 9]) {
      const result = simulateCrawl(spec(agents));
      expect(result.truthSize).toBe(webFor(agents).graph.fetchedCount);
      expect([agents, result.coverage, result.overlap]).toEqual([agents, 1, 0]);
      expect([agents, result.urlsSent]).toEqual([agents, expectedUrlsSent(agents)]);
      if (agents === 1) expect(result.heartbeats).toBe(0);
      else {
        expect(result.urlsSent).toBeGreaterThan(0);
        // Each interval, each pair: a request and an answer.
        expect(result.heartbeats % (agents * (agents - 1))).toBe(0);
        expect(result.heartbeats).toBeGreaterThan(0);
      }
    }
  });

  it("sends a message a URL at batch size 1, and fewer messages, not fewer URLs, in batches", () => {
    const single = simulateCrawl(spec(4, { settings: { ...SETTINGS, batchUrls: 1 } }));
    const batched = simulateCrawl(spec(4));
    expect(single.batchesSent).toBe(single.urlsSent);
    expect(batched.urlsSent).toBe(single.urlsSent);
    expect(batched.batchesSent).toBeLessThan(single.urlsSent / 10);
  });

  it("repeats itself exactly from the same seed, and draws other fetch times from another", () => {
    const a = simulateCrawl(spec(3, { seed: 7 }));
    expect(simulateCrawl(spec(3, { seed: 7 }))).toEqual(a);
    expect(simulateCrawl(spec(3, { seed: 8 })).seconds).not.toBe(a.seconds);
  });

  it("is held to an agent's CPU: one CPU at 2 ms a page fetches 500 pages a second", () => {
    const result = simulateCrawl(spec(1, { timing: { ...TIMING, fetchMs: [0.01], cpuMsPerPage: 2 } }));
    expect(result.steadyPagesPerSecondPerAgent).toBeGreaterThan(490);
    expect(result.steadyPagesPerSecondPerAgent).toBeLessThanOrEqual(500.5);
    expect(result.cpuBusy).toBeGreaterThan(0.9);
    // Half of each second spent on the agent's own upkeep leaves half for pages.
    const halved = simulateCrawl(
      spec(1, { timing: { ...TIMING, fetchMs: [0.01], cpuMsPerPage: 2, cpuMsPerAgentSecond: 500 } }),
    );
    expect(halved.steadyPagesPerSecondPerAgent).toBeGreaterThan(240);
    expect(halved.steadyPagesPerSecondPerAgent).toBeLessThanOrEqual(250.5);
  });

  it("has the survivors crawl a killed agent's hosts once they suspect it, fetching its pages again", () => {
    const plain = simulateCrawl(spec(4));
    const result = simulateCrawl(
      spec(4, { fault: { afterFetches: Math.floor(plain.fetches / 3), kill: 1 } }),
    );
    expect(result.coverage).toBe(1);
    expect(result.fetches).toBeGreaterThan(result.distinct);
    expect(result.faultAtSeconds).toBeGreaterThan(0);
    // Suspected after 1.2 s of silence, noticed at a heartbeat's sweep: 1.2 … 1.4 s.
    expect(result.viewChangedAfterSeconds).toBeGreaterThanOrEqual(1.2);
    expect(result.viewChangedAfterSeconds).toBeLessThanOrEqual(1.4);
    expect(result.gapSeconds).toBeGreaterThanOrEqual(1.2);
    expect(result.gapSeconds).toBeLessThan(2);
  });

  it("ends with the web covered whenever agents die, mid-batch included", () => {
    // A slow CPU keeps batches waiting at their receivers: some die with one received, unanswered.
    const timing = { ...TIMING, cpuMsPerPage: 3, cpuMsPerUrlReceived: 0.2 };
    const plain = simulateCrawl(spec(10, { timing }));
    for (let tenth = 1; tenth <= 9; tenth++) {
      for (const kill of [1, 3]) {
        const afterFetches = Math.floor((plain.fetches * tenth) / 10);
        const result = simulateCrawl(spec(10, { timing, fault: { afterFetches, kill } }));
        expect([tenth, kill, result.coverage]).toEqual([tenth, kill, 1]);
      }
    }
  });

  it("moves hosts to a joining agent with the pages done there: nothing is fetched twice", () => {
    const plain = simulateCrawl(spec(3));
    const result = simulateCrawl(spec(3, { fault: { afterFetches: Math.floor(plain.fetches / 3), add: 1 } }));
    expect(result.coverage).toBe(1);
    expect(result.overlap).toBe(0);
    // The newcomer crawled its hosts within a heartbeat or so.
    expect(result.gapSeconds).toBeLessThan(1);
  });

  it("refuses a cluster of no agents, no fetch times, seeds outside its web, and faults it cannot run", () => {
    const refusals = [
      () => simulateCrawl(spec(0)),
      () => simulateCrawl(spec(3, { fault: { afterFetches: 10, kill: 1, add: 1 } })),
      () => simulateCrawl(spec(3, { fault: { afterFetches: 10, kill: 3 } })),
      () => simulateCrawl(spec(2, { timing: { ...TIMING, fetchMs: [] } })),
      () => simulateCrawl(spec(2, { seedsOf: () => ["http://elsewhere.test/"] })),
    ];
    for (const refuse of refusals) {
      let caught: unknown;
      try {
        refuse();
      } catch (error) {
        caught = error;
      }
      expect(isUbiError(caught, ErrorCode.InvalidArgument)).toBe(true);
    }
  });
});

describe("nonNegativeLeastSquares", () => {
  it("recovers costs from exact crawls, and keeps a cost the data would make negative at 0", () => {
    // CPU = 1.5 × pages + 0.02 × URLs + 800 × agents, four crawls of 5,000 pages.
    const rows = [
      [5000, 0, 1],
      [5000, 1500, 2],
      [5000, 3000, 4],
      [5000, 4500, 8],
    ];
    const exact = nonNegativeLeastSquares(
      rows,
      rows.map(
        ([pages, urls, agents]) =>
          1.5 * (pages as number) + 0.02 * (urls as number) + 800 * (agents as number),
      ),
    );
    expect(exact[0]).toBeCloseTo(1.5, 6);
    expect(exact[1]).toBeCloseTo(0.02, 6);
    expect(exact[2]).toBeCloseTo(800, 4);
    // More agents, less CPU: no negative cost an agent, the rest fitted without it.
    const clipped = nonNegativeLeastSquares(
      [
        [100, 1],
        [100, 2],
      ],
      [300, 200],
    );
    expect(clipped[0]).toBeCloseTo(2.5, 9);
    expect(clipped[1]).toBe(0);
  });
});

describe("steadyRate", () => {
  it("takes the rate over the middle of a crawl, leaving out its start and tail", () => {
    // 10 fetches a second for 100 s, with a slow start and a long tail.
    const times = [0, 5000, ...Array.from({ length: 1000 }, (_, i) => 10_000 + i * 100), 500_000];
    expect(steadyRate(times)).toBeCloseTo(10, 1);
    expect(steadyRate([5])).toBe(0);
  });
});

describe("EventQueue", () => {
  it("runs events in time order, ties in the order scheduled, and skips cancelled ones", () => {
    const events = new EventQueue();
    const ran: string[] = [];
    events.at(5, () => ran.push(`a@${events.now}`));
    const cancelled = events.at(3, () => ran.push("never"));
    events.at(3, () => {
      ran.push(`b@${events.now}`);
      events.after(1, () => ran.push(`c@${events.now}`));
      events.at(0, () => ran.push(`d@${events.now}`));
    });
    events.cancel(cancelled);
    expect(events.run(() => false)).toBe(4);
    expect(ran).toEqual(["b@3", "d@3", "c@4", "a@5"]);
  });

  it("stops when told, or before an event past the limit", () => {
    const events = new EventQueue();
    let count = 0;
    for (let i = 1; i <= 5; i++) events.at(i * 10, () => count++);
    expect(events.run(() => count === 2)).toBe(2);
    expect(events.run(() => false, 40)).toBe(2);
    expect(events.now).toBe(40);
    expect(events.run(() => false)).toBe(1);
  });
});
