import { expect, it } from "vitest";
import { traceRequests, waitFor } from "../agent/harness.js";
import { inProcessScope } from "./memory-cluster-harness.js";

/**
 * A whole cluster in this process: five real agents (real frontiers, LevelDB folders, fetches from the
 * test web over loopback) whose gRPC is replaced by a MemoryNetwork — every message still encoded,
 * validated and answered by the real handlers — so a partition, a slow direction, a join and a graceful
 * leave are made on purpose, in seconds, instead of by timing real processes. On virtual time, with the
 * cluster-wide IP limit: the protocol's waits pass in turns of the event loop.
 */

/** No host over 40 articles: the crawl's end is not one big host's alone. */
const WEB = { hosts: 16, pages: 240, maxArticlesPerHost: 40, seed: 11, responseDelayMs: 2 };

const scope = inProcessScope();

it("5 agents in one process survive a partition, a slow direction, a join and a graceful leave, and cover the web", async () => {
  const web = await scope.web(WEB);
  const truth = web.truth();
  const trace = traceRequests(web.web.recorder);
  // On virtual time (test/support/virtual-time.ts): every wait of the protocol — suspicion, the IP
  // authorities' grace at the other side's addresses after the cut, the slow direction, politeness —
  // passes in turns of the event loop. 400 ms a host, virtual (~20 ms real): the crawl is still on when
  // the faults come.
  const agents = scope.cluster(web, {
    agent: { delayMs: 400, dedup: "cluster" },
    clock: scope.virtualTime().clock,
  });
  const { network } = agents;
  const addressOf = (id: string) => agents.addressOf(id);
  const startedAt = performance.now();
  /** When each step ended, ms into the run: printed, to see where a slow run spent its time. */
  const steps: string[] = [];
  const step = (name: string) => steps.push(`${name} ${Math.round(performance.now() - startedAt)}`);
  const missing = () => agents.missing();

  await agents.start("a", { seeds: web.web.seeds });
  await Promise.all(["b", "c", "d"].map((id) => agents.start(id)));
  // Everything b says to c takes 150 ms (c's answers to b are quick).
  network.setLink(addressOf("b"), addressOf("c"), { delayMs: 150 });
  step("started");
  await waitFor(() => missing().length < (truth.urls.length * 7) / 8, "an eighth of the web fetched", 10_000);
  step("an eighth");

  // A join, then a graceful leave of an agent with work queued: neither refetches a page. The joiner has
  // three times the others' capacity: the test web's hosts have random ports, and at an equal share a
  // newcomer owns none of the 16 hosts in about 1 run of 100 (seen once on CI), 1 in 60,000 at half.
  // The leaver is whichever of a, b and c owns a host it is crawling with URLs queued: after the join,
  // one agent alone owns none of the 16 hosts about one run in twelve (it failed so on CI, for b).
  await agents.start("e", { cluster: { capacity: 3 } });
  step("e joined");
  const leaver = await agents.crawlingOwnHost(["b", "a", "c"], 10_000);
  const outcome = await agents.leave(leaver);
  step(`${leaver} left`);
  const missingWhenLeft = missing().length;
  const twiceBeforeSplit = agents.metrics().repeated;

  // d is cut off for longer than the others take to suspect it; each side takes the other's hosts.
  const others = ["a", "b", "c", "e"].filter((id) => id !== leaver);
  network.partition([addressOf("d")], others.map(addressOf));
  const cutAt = performance.now();
  const missingWhenCut = missing().length;
  const watcher = agents.node(others[0] as string);
  await waitFor(() => !watcher.alive.some((member) => member.id === "d"), "the others see d gone", 10_000);
  step("d cut off");
  network.heal();
  await waitFor(
    () => agents.viewsAre([...others, "d"]),
    () => `every view whole again: ${agents.views().join("; ")}`,
    10_000,
  );

  step("healed");
  await waitFor(
    () => missing().length === 0,
    () => `every page fetched; missing ${missing().slice(0, 5).join(", ")}; ${agents.leftover()}`,
    20_000,
  );
  const elapsedMs = performance.now() - startedAt;

  expect(outcome).toMatchObject({ hostsNotHanded: 0, urlsNotHanded: 0 });
  expect(outcome.hostsHanded).toBeGreaterThan(0);
  // e took hosts over: it crawled them, or was handed what others had crawled there.
  const joined = agents.node("e").stats();
  expect(joined?.hostsOwned).toBeGreaterThan(0);
  expect((joined?.pagesFetched ?? 0) + (joined?.pagesRecovered ?? 0)).toBeGreaterThan(0);
  expect(twiceBeforeSplit).toEqual([]);
  // Each fault came mid-crawl: work was left when the leaver had left, and when d was cut off.
  expect(missingWhenLeft).toBeGreaterThan(truth.urls.length / 5);
  expect(missingWhenCut).toBeGreaterThan(truth.urls.length / 10);
  // What was fetched twice, the partition's price, was fetched again once it began: d took hosts without
  // the others' record of them, and they took d's.
  const repeated = agents.expectCoveredRepeatingSince(trace, cutAt);
  console.log(
    `memory cluster: ${truth.urls.length} pages, ${missingWhenLeft} left when ${leaver} left, ${missingWhenCut} when d was cut off, ${repeated.length} fetched twice, ` +
      `whole run ${Math.round(elapsedMs)} ms (${steps.join(", ")})`,
  );
});
