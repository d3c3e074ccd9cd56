import { expect, it } from "vitest";
import { type LastKnown, LastKnownFigures, rememberedStats } from "../../src/cluster/last-known.js";
import type { WorkLoad } from "../../src/cluster/termination.js";
import type { MemberEntry } from "../../src/failure-detector/index.js";
import type { AgentStats } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { STATS } from "../transport/helpers.js";

/**
 * What an agent last knew of each member, and the fetch totals it gossips: the highest heard wins, so
 * every agent ends up counting a departed agent's pages, whenever it joined; and the stats row of a
 * member that cannot be asked, from what was last known of it.
 */

const load = (pagesFetched: number, queuedUrls = 0): WorkLoad => ({
  idle: false,
  urlBatchesSent: 0,
  urlBatchesReceived: 0,
  pagesFetched,
  queuedUrls,
  spareHostSlots: 0,
  revisitPages: 0,
  revisitBudget: 0,
});

const member = (id: string, status: MemberEntry["status"], lastHeardMs: number): MemberEntry => ({
  id,
  address: `${id}:7000`,
  capacity: 1,
  incarnation: 5,
  status,
  lastHeardMs,
});

it("keeps the highest totals gossiped of each member, never its own", () => {
  const known = new LastKnownFigures("me", new ManualClock());
  known.noteGossip([
    { id: "a3", pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} },
    { id: "me", pagesFetched: 5, bytesFetched: 5, pagesRecovered: 0, errors: {} },
  ]);
  known.noteGossip([
    { id: "a3", pagesFetched: 1_000, bytesFetched: 25_000, pagesRecovered: 4, errors: { http_4xx: 3 } },
  ]);
  known.noteGossip([
    {
      id: "a3",
      pagesFetched: 1_000,
      bytesFetched: 25_000,
      pagesRecovered: 2,
      errors: { http_4xx: 1, dns: 2 },
    },
  ]);
  known.noteGossip(undefined); // an agent that predates the field
  expect(known.of("a3")?.gossiped).toEqual({
    pagesFetched: 1_321,
    bytesFetched: 25_000,
    pagesRecovered: 4,
    errors: { http_4xx: 3, dns: 2 },
  });
  expect(known.of("me")).toBeUndefined();
});

it("gossips its own totals first, then the best it knows of each member of the view, from any source", () => {
  const clock = new ManualClock();
  const known = new LastKnownFigures("me", clock);
  known.noteLoad("a1", load(400));
  known.noteStats("a2", {
    pagesFetched: 300,
    bytesFetched: 9_000,
    pagesRecovered: 0,
    errors: {},
  } as AgentStats);
  known.noteLoad("a2", load(350));
  known.noteGossip([{ id: "a3", pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} }]);
  known.noteGossip([{ id: "forgotten", pagesFetched: 7, bytesFetched: 7, pagesRecovered: 0, errors: {} }]);
  const own = { id: "me", pagesFetched: 10, bytesFetched: 100, pagesRecovered: 0, errors: {} };
  expect(known.gossip(own, ["me", "a1", "a2", "a3", "unknown"])).toEqual([
    own,
    { id: "a1", pagesFetched: 400, bytesFetched: 0, pagesRecovered: 0, errors: {} },
    { id: "a2", pagesFetched: 350, bytesFetched: 9_000, pagesRecovered: 0, errors: {} },
    { id: "a3", pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} },
  ]);
  expect(known.of("a1")?.load?.atMs).toBe(clock.now());
});

const NOW = 5_000_000;

/** The figures of a member that answered `GetStats` once. */
const lastStats: AgentStats = {
  id: "b",
  address: "b:7000",
  capacity: 3,
  replicas: 64,
  circleShare: 0.4,
  view: [{ id: "a", address: "a:7000", status: "ALIVE", lastHeardMsAgo: 10 }],
  hostsOwned: 40,
  hostsKnown: 50,
  hostsActive: 6,
  hostsDone: 12,
  pagesFetched: 300,
  bytesFetched: 9_000,
  queuedUrls: 25,
  peers: [],
  communicationOverhead: 0.3,
  linksToOtherAgents: 90,
  pagesRecovered: 0,
  errors: { timeout: 2 },
  pagesPerSecond: 7.5,
  uptimeMs: 60_000,
  idle: true,
  paused: false,
  hostsHeld: 0,
  heldFor: [],
  pagesFetchedThisRun: 300,
  status: "ALIVE",
  reportedMsAgo: 0,
  waiting: [],
  duplicates: 1,
  duplicateBytes: 20,
  digestMessages: 3,
  revisits: null,
  payloadCopies: 1,
  payloadsUnchecked: 2,
  // A busy address, as the transport tests send one; kept by the agent it knows of.
  busiestIps: STATS.busiestIps.map((address) => ({ ...address, keeper: "a" })),
};

const suspectedB = member("b", "suspected", NOW - 8_000);

it("gives zeros for a member nothing is known of, with its status, and not idle", () => {
  expect(rememberedStats({ ...suspectedB, capacity: 3 }, undefined, NOW)).toEqual({
    id: "b",
    address: "b:7000",
    capacity: 3,
    replicas: 0,
    circleShare: 0,
    view: [],
    hostsOwned: 0,
    hostsKnown: 0,
    hostsActive: 0,
    hostsDone: 0,
    pagesFetched: 0,
    bytesFetched: 0,
    queuedUrls: 0,
    peers: [],
    communicationOverhead: 0,
    linksToOtherAgents: 0,
    pagesRecovered: 0,
    errors: {},
    pagesPerSecond: 0,
    uptimeMs: 0,
    idle: false,
    paused: false,
    hostsHeld: 0,
    heldFor: [],
    pagesFetchedThisRun: 0,
    status: "SUSPECTED",
    reportedMsAgo: 0,
    waiting: [],
    duplicates: 0,
    duplicateBytes: 0,
    digestMessages: 0,
    revisits: null,
    payloadCopies: 0,
    payloadsUnchecked: 0,
    busiestIps: [],
  } satisfies AgentStats);
  expect(rememberedStats(suspectedB, {}, NOW)).toMatchObject({ pagesFetched: 0, reportedMsAgo: 0 });
});

it("gives a member only heard in heartbeats its pages fetched and queue from its last load, and their age", () => {
  const remembered = rememberedStats(suspectedB, { load: { value: load(120, 14), atMs: NOW - 2_500 } }, NOW);
  expect(remembered).toMatchObject({
    id: "b",
    pagesFetched: 120,
    queuedUrls: 14,
    status: "SUSPECTED",
    reportedMsAgo: 2_500,
    idle: false,
    pagesPerSecond: 0,
  });
});

it("gives a member's last stats, with its status and their age, not idle, fetching nothing now and busy at no address", () => {
  const left = member("b", "left", NOW - 1_000);
  const known: LastKnown = { stats: { value: lastStats, atMs: NOW - 4_000 } };
  expect(rememberedStats(left, known, NOW)).toEqual({
    ...lastStats,
    status: "LEFT",
    reportedMsAgo: 4_000,
    idle: false,
    pagesPerSecond: 0,
    busiestIps: [],
  });
});

it("takes the later of the two readings of pages fetched, and the queue from the newer reading", () => {
  const stats = { value: lastStats, atMs: NOW - 4_000 };
  // A heartbeat after the stats: more pages, a shorter queue.
  const newer = rememberedStats(suspectedB, { stats, load: { value: load(350, 3), atMs: NOW - 1_000 } }, NOW);
  expect(newer).toMatchObject({ pagesFetched: 350, queuedUrls: 3, reportedMsAgo: 1_000, hostsOwned: 40 });
  // A heartbeat before the stats: the stats' queue; a lower (older) page count never wins.
  const older = rememberedStats(suspectedB, { stats, load: { value: load(280, 3), atMs: NOW - 6_000 } }, NOW);
  expect(older).toMatchObject({ pagesFetched: 300, queuedUrls: 25, reportedMsAgo: 4_000 });
  // Both at once: the heartbeat's.
  const tie = rememberedStats(suspectedB, { stats, load: { value: load(300, 8), atMs: NOW - 4_000 } }, NOW);
  expect(tie.queuedUrls).toBe(8);
});

it("never says a reading is from the future", () => {
  const known: LastKnown = { load: { value: load(1, 1), atMs: NOW + 30 } };
  expect(rememberedStats(suspectedB, known, NOW).reportedMsAgo).toBe(0);
});

it("counts what the others gossiped of a member, for one this agent never heard itself (it left before this one joined)", () => {
  const left = member("a3", "left", NOW - 1_000);
  const gossiped = { pagesFetched: 1_321, bytesFetched: 20_000, pagesRecovered: 0, errors: {} };
  expect(rememberedStats(left, { gossiped }, NOW)).toMatchObject({
    id: "a3",
    status: "LEFT",
    pagesFetched: 1_321,
    bytesFetched: 20_000,
  });
  // The highest reading wins: gossip newer than the stats, or older.
  const stats = { value: lastStats, atMs: NOW - 4_000 };
  expect(rememberedStats(left, { stats, gossiped }, NOW)).toMatchObject({
    pagesFetched: 1_321,
    bytesFetched: 20_000,
  });
  expect(
    rememberedStats(
      left,
      { stats, gossiped: { pagesFetched: 1, bytesFetched: 1, pagesRecovered: 0, errors: {} } },
      NOW,
    ),
  ).toMatchObject({ pagesFetched: lastStats.pagesFetched, bytesFetched: lastStats.bytesFetched });
});
