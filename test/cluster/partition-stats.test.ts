import { expect, it } from "vitest";
import { CrawlStats } from "../../src/agent/index.js";
import { IpActivity } from "../../src/agent/ip-activity.js";
import { loneAgentStats, PartitionStats, type StatsSource } from "../../src/cluster/partition-stats.js";
import type { MemberEntry } from "../../src/failure-detector/index.js";
import type { WaitingHosts } from "../../src/frontier/index.js";
import type { RevisitFigures } from "../../src/recrawl/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** Agent "me" as PartitionStats reads it: real crawl counters, the rest set by the test. */
function fakeAgent(clock: ManualClock) {
  const state = {
    isIdle: true,
    isPaused: false,
    activeHosts: 0,
    queuedUrls: 0,
    spareHostSlots: 0,
    waiting: [] as WaitingHosts[],
    /** host, URLs waiting, pages fetched. */
    hosts: [] as [string, number, number][],
    revisits: undefined as RevisitFigures | undefined,
  };
  const stats = new CrawlStats(clock);
  /** Addresses this agent's requests go to: the keeper of 127.2.0.2 is agent "b", of the others "me". */
  const ips = new IpActivity(
    {},
    {
      clock,
      politenessAt: (ip) => ({
        ...(ip === "127.2.0.2" ? { keeper: "b" } : {}),
        line: 0,
        blockedUntilMs: 0,
        delayMs: 0,
      }),
    },
  );
  const agent: StatsSource = {
    id: "me",
    stats,
    get isIdle() {
      return state.isIdle;
    },
    get isPaused() {
      return state.isPaused;
    },
    get activeHosts() {
      return state.activeHosts;
    },
    get queuedUrls() {
      return state.queuedUrls;
    },
    get spareHostSlots() {
      return state.spareHostSlots;
    },
    waiting: () => state.waiting,
    revisits: () => state.revisits,
    revisitSharing: () => undefined,
    busiestIps: (limit) => ips.busiest(limit),
    forEachHost: (visit) => {
      for (const [host, waiting, fetched] of state.hosts) visit(host, waiting, fetched);
    },
  };
  return { state, stats, agent, ips };
}

/** PartitionStats of agent "me" at "me:7000", capacity 2; it owns the hosts in `owned`. */
function setUp() {
  const clock = new ManualClock();
  const { state, stats, agent, ips } = fakeAgent(clock);
  const owned = new Set<string>();
  const heldUntil = new Map<string, number>();
  const exchange = { idle: true };
  const members: MemberEntry[] = [];
  const partition = new PartitionStats(
    { address: "me:7000", capacity: 2 },
    {
      clock,
      agent,
      ownership: { holdsHost: (host) => owned.has(host), replicas: 64, share: 0.25 },
      grace: { heldUntilMs: (host) => heldUntil.get(host) ?? 0, heldFor: ["gone"] },
      exchangeIdle: () => exchange.idle,
      members: () => members,
    },
  );
  return { clock, state, stats, owned, heldUntil, exchange, members, partition, ips };
}

const member = (id: string, status: MemberEntry["status"], lastHeardMs: number): MemberEntry => ({
  id,
  address: `${id}:7000`,
  capacity: 1,
  incarnation: 5,
  status,
  lastHeardMs,
});

it("is idle only when the agent is idle, the exchange has nothing pending and the agent is not paused", () => {
  const { state, exchange, partition } = setUp();
  for (const agentIdle of [true, false]) {
    for (const exchangeIdle of [true, false]) {
      for (const paused of [false, true]) {
        state.isIdle = agentIdle;
        exchange.idle = exchangeIdle;
        state.isPaused = paused;
        const expected = agentIdle && exchangeIdle && !paused;
        expect(partition.load().idle, `${agentIdle} ${exchangeIdle} ${paused}`).toBe(expected);
        expect(partition.stats().idle).toBe(expected);
      }
    }
  }
});

it("carries the URL batches delivered and received, the pages fetched so far and the URLs queued in its load", () => {
  const { state, stats, partition } = setUp();
  partition.batchesDelivered = 4;
  partition.batchesReceived = 9;
  state.queuedUrls = 31;
  stats.recordFetch(100, 200);
  stats.recordFetch(100, 200);
  // The load is for termination detection: it counts every page fetched, written or not.
  expect(partition.load()).toEqual({
    idle: true,
    urlBatchesSent: 4,
    urlBatchesReceived: 9,
    pagesFetched: 2,
    queuedUrls: 31,
    spareHostSlots: 0,
    revisitPages: 0,
    revisitBudget: 0,
  });
});

it("counts the hosts it knows, owns, has done, and holds for a crashed agent that may come back", () => {
  const { clock, state, owned, heldUntil, partition } = setUp();
  const now = clock.now();
  state.hosts = [
    ["owned-waiting-held", 3, 0],
    ["owned-waiting-held-long", 4, 2],
    ["owned-waiting-hold-ends-now", 2, 1],
    ["owned-done-held", 0, 5],
    ["other-waiting-held", 1, 0],
    ["other-nothing-fetched", 0, 0],
    ["owned-done", 0, 2],
  ];
  for (const [host] of state.hosts) if (host.startsWith("owned")) owned.add(host);
  heldUntil.set("owned-waiting-held", now + 1);
  heldUntil.set("owned-waiting-held-long", now + 60_000);
  heldUntil.set("owned-waiting-hold-ends-now", now);
  heldUntil.set("owned-done-held", now + 1_000);
  heldUntil.set("other-waiting-held", now + 1_000);
  const stats = partition.stats();
  expect(stats.hostsKnown).toBe(7);
  expect(stats.hostsOwned).toBe(5);
  expect(stats.hostsDone).toBe(2);
  // Held: owned, with URLs waiting, and a grace still running (a host with none waiting is not held).
  expect(stats.hostsHeld).toBe(2);
});

it("reports the counters as last written durably, not the ones still in memory", () => {
  const { stats, partition } = setUp();
  stats.restore({
    pagesFetched: 10,
    bytesFetched: 1_000,
    linksFound: 40,
    linksToOtherAgents: 3,
    pagesRecovered: 1,
    fetchRetries: 0,
    duplicates: 1,
    duplicateBytes: 50,
    digestMessages: 2,
    errors: { timeout: 1 },
    dropped: {},
    peers: { b: { urlsSent: 6, urlsReceived: 2, batchesSent: 2, batchesReceived: 1 } },
  });
  stats.recordFetch(500, 200);
  stats.recordFetch(500, 200);
  stats.recordError("http_5xx");
  stats.markDurable(stats.counters());
  // Not written yet: a crash would take these back.
  stats.recordFetch(700, 200);
  stats.recordError("dns");
  stats.recordDuplicate(30);
  stats.linksToOtherAgents += 9;
  stats.pagesRecovered += 4;
  stats.digestMessages += 5;
  stats.peer("c").urlsSent = 8;
  const reported = partition.stats();
  expect(reported.pagesFetched).toBe(12);
  expect(reported.bytesFetched).toBe(2_000);
  expect(reported.pagesFetchedThisRun).toBe(2);
  expect(reported.linksToOtherAgents).toBe(3);
  expect(reported.pagesRecovered).toBe(1);
  expect(reported.errors).toEqual({ timeout: 1, http_5xx: 1 });
  expect(reported.duplicates).toBe(1);
  expect(reported.duplicateBytes).toBe(50);
  expect(reported.digestMessages).toBe(2);
  expect(reported.peers).toEqual([
    { peerId: "b", urlsSent: 6, urlsReceived: 2, batchesSent: 2, batchesReceived: 1 },
  ]);
  // URLs sent per page fetched: 6 / 12.
  expect(reported.communicationOverhead).toBe(0.5);
});

it("reports 0 for the digest counters that durable state written before them lacks", () => {
  const { stats, partition } = setUp();
  stats.markDurable({
    pagesFetched: 1,
    bytesFetched: 1,
    linksFound: 0,
    linksToOtherAgents: 0,
    pagesRecovered: 0,
    fetchRetries: 0,
    errors: {},
    dropped: {},
    peers: {},
  });
  const reported = partition.stats();
  expect([reported.duplicates, reported.duplicateBytes, reported.digestMessages]).toEqual([0, 0, 0]);
});

it("describes itself: id, address, capacity, circle, active hosts, queue, pause, uptime and rate", () => {
  const { clock, state, stats, partition } = setUp();
  state.activeHosts = 5;
  state.queuedUrls = 77;
  state.isPaused = true;
  clock.advance(2_000);
  for (let i = 0; i < 4; i++) stats.recordFetch(10, 200);
  const reported = partition.stats();
  expect(reported).toMatchObject({
    id: "me",
    address: "me:7000",
    capacity: 2,
    replicas: 64,
    circleShare: 0.25,
    hostsActive: 5,
    queuedUrls: 77,
    paused: true,
    idle: false,
    uptimeMs: 2_000,
    // 4 pages in the 2 s since the start.
    pagesPerSecond: 2,
    heldFor: ["gone"],
    status: "ALIVE",
    reportedMsAgo: 0,
  });
});

it("gives each member of the view with its wire status and how long ago it was heard, never less than 0", () => {
  const { clock, members, partition } = setUp();
  const now = clock.now();
  members.push(member("a", "alive", now - 300), member("b", "suspected", now - 9_000));
  // Heard "after" now (a reading taken between two clock reads): not in the future.
  members.push(member("c", "left", now + 50));
  expect(partition.stats().view).toEqual([
    { id: "a", address: "a:7000", status: "ALIVE", lastHeardMsAgo: 300 },
    { id: "b", address: "b:7000", status: "SUSPECTED", lastHeardMsAgo: 9_000 },
    { id: "c", address: "c:7000", status: "LEFT", lastHeardMsAgo: 0 },
  ]);
});

it("gives the hosts waiting, by reason, with how long until the first is visited again, never less than 0", () => {
  const { clock, state, partition } = setUp();
  const now = clock.now();
  state.waiting = [
    { reason: "polite", hosts: 12, nextAtMs: now + 1_500 },
    { reason: "robots", hosts: 1, nextAtMs: now - 20 },
  ];
  expect(partition.stats().waiting).toEqual([
    { reason: "polite", hosts: 12, nextInMs: 1_500 },
    { reason: "robots", hosts: 1, nextInMs: 0 },
  ]);
});

it("gives an agent crawling alone every host, the whole circle, no view and nothing held", () => {
  const clock = new ManualClock();
  const { state, agent } = fakeAgent(clock);
  state.hosts = [
    ["a.example", 2, 0],
    ["b.example", 0, 3],
  ];
  const stats = loneAgentStats(agent, clock).stats();
  expect(stats).toMatchObject({
    id: "me",
    address: "",
    capacity: 1,
    replicas: 0,
    circleShare: 1,
    view: [],
    hostsKnown: 2,
    hostsOwned: 2,
    hostsDone: 1,
    hostsHeld: 0,
    heldFor: [],
    // With no exchange, the agent alone decides.
    idle: true,
  });
  state.isIdle = false;
  expect(loneAgentStats(agent, clock).load().idle).toBe(false);
});

it("gives this agent's own fetch totals, for the heartbeats' gossip", () => {
  const { stats, partition } = setUp();
  stats.recordFetch(1_000, 200);
  expect(partition.figures()).toEqual({
    id: "me",
    pagesFetched: 0,
    bytesFetched: 0,
    pagesRecovered: 0,
    errors: {},
  }); // not durable yet
  stats.markDurable(stats.counters());
  expect(partition.figures()).toEqual({
    id: "me",
    pagesFetched: 1,
    bytesFetched: 1_000,
    pagesRecovered: 0,
    errors: {},
  });
});

it("gives the revisits of a continuous crawl, and none with --recrawl off", () => {
  const { state, partition } = setUp();
  expect(partition.stats().revisits).toBeNull();
  const figures: RevisitFigures = {
    queued: 12,
    revisited: 10,
    notModified: 4,
    unchanged: 3,
    changed: 2,
    missed: 1,
    planned: 300,
    overdueMs: 2500,
    received: 7,
    estimatedFreshness: 0.4,
    freshnessPages: 120,
    budget: 7.5,
    budgetPages: 300,
  };
  state.revisits = figures;
  expect(partition.stats().revisits).toEqual(figures);
});

it("lists the 10 busiest addresses, each with its keeper: this agent's id where it keeps the address itself", () => {
  const { ips, partition } = setUp();
  for (let i = 1; i <= 12; i++) {
    for (let request = 0; request < i; request++) ips.waits(`127.2.0.${i}`, `h${i}.test`).started()();
  }
  const busiest = partition.stats().busiestIps;
  expect(busiest.map((entry) => entry.ip)).toEqual(
    [12, 11, 10, 9, 8, 7, 6, 5, 4, 3].map((i) => `127.2.0.${i}`),
  );
  expect(busiest[0]).toMatchObject({ keeper: "me", hosts: 1, hostNames: ["h12.test"], startedRecently: 12 });
  ips.waits("127.2.0.2", "h2.test");
  expect(partition.stats().busiestIps.find((entry) => entry.ip === "127.2.0.2")).toMatchObject({
    keeper: "b",
    waiting: 1,
  });
});
