import { expect, it } from "vitest";
import { LastKnownFigures } from "../../src/cluster/last-known.js";
import type { WorkLoad } from "../../src/cluster/termination.js";
import type { AgentStats } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * What an agent last knew of each member, and the fetch totals it gossips: the highest heard wins, so
 * every agent ends up counting a departed agent's pages, whenever it joined.
 */

const load = (pagesFetched: number): WorkLoad => ({
  idle: false,
  urlBatchesSent: 0,
  urlBatchesReceived: 0,
  pagesFetched,
  queuedUrls: 0,
  spareHostSlots: 0,
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
