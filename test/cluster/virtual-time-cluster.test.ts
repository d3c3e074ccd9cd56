import { expect, it } from "vitest";
import { traceRequests, waitFor } from "../agent/harness.js";
import { inProcessScope } from "./memory-cluster-harness.js";

/**
 * Five real agents in this process (real frontiers, LevelDB folders, fetches from the test web over
 * loopback, the cluster-wide IP limit) on a MemoryNetwork and virtual time: every timer of the protocol
 * (heartbeats, suspicion, the takeover grace, politeness delays, IP grants) waits turns of the event
 * loop, not milliseconds, so a join, a graceful leave and a crash with everything they wait for pass in
 * a few seconds of real time (20–30 s of protocol time).
 */

const WEB = { hosts: 16, pages: 240, maxArticlesPerHost: 40, seed: 11, responseDelayMs: 0 };

const scope = inProcessScope();

it("5 agents on virtual time: a join, a graceful leave and a crash mid-crawl, and the web covered", async () => {
  const time = scope.virtualTime();
  const web = await scope.web(WEB);
  const truth = web.truth();
  const trace = traceRequests(web.web.recorder);
  // 100 ms between a host's requests, virtual: the crawl is still on when the faults come.
  const agents = scope.cluster(web, { clock: time.clock, agent: { delayMs: 100 } });
  const startedAt = performance.now();
  const steps: string[] = [];
  const step = (name: string) =>
    steps.push(
      `${name} ${Math.round(performance.now() - startedAt)} ms (${time.elapsedMs / 1000} s virtual)`,
    );
  const missing = () => agents.missing();
  await agents.startAll(["a", "b", "c", "d"], web.web.seeds);
  step("started");
  await waitFor(() => missing().length < (truth.urls.length * 7) / 8, "an eighth of the web fetched", 20_000);

  // A join, with three times the others' capacity: it owns some of the 16 hosts, claimed with what
  // was done there.
  await agents.start("e", { cluster: { capacity: 3 } });
  await waitFor(
    () => agents.viewsAre(["a", "b", "c", "d", "e"]),
    () => agents.views().join("; "),
    20_000,
  );
  step("e joined");
  // A graceful leave of an agent crawling a host it owns: its hosts and queues go to their next owners
  // (the newcomer's too), and what it alone answered for to keepers.
  const leaver = await agents.crawlingOwnHost(["b", "a", "c"], 20_000);
  const outcome = await agents.leave(leaver);
  step(`${leaver} left`);
  const missingWhenLeft = missing().length;
  const twiceBeforeCrash = agents.metrics().repeated;

  // Then d stops without a word — maybe holding hosts the leaver handed it —: the others find it
  // silent and take its hosts after the takeover grace.
  const crashedAt = performance.now();
  await agents.crash("d");
  const survivors = ["a", "b", "c", "e"].filter((id) => id !== leaver);
  await waitFor(
    () => agents.viewsAre(survivors),
    () => agents.views().join("; "),
    20_000,
  );
  step("d crashed");

  await waitFor(
    () => missing().length === 0,
    () => `still missing: ${missing().slice(0, 10).join(" ")}`,
    20_000,
  );
  step("covered");

  expect(outcome).toMatchObject({ hostsNotHanded: 0, urlsNotHanded: 0 });
  expect(outcome.hostsHanded, "hosts the leaver handed").toBeGreaterThan(0);
  expect(missingWhenLeft, "pages left at the leave").toBeGreaterThan(0);
  expect(agents.node("e").stats().hostsOwned, "hosts the newcomer owns").toBeGreaterThan(0);
  expect(twiceBeforeCrash).toEqual([]);
  // What was fetched twice, the crash's price, was fetched again after it: the join and the leave
  // fetched nothing twice.
  const repeated = agents.expectCoveredRepeatingSince(trace, crashedAt);
  console.log(
    `virtual-time cluster: ${truth.urls.length} pages, ${missingWhenLeft} left when ${leaver} left, ` +
      `${repeated.length} fetched twice; ${steps.join(", ")}`,
  );
});
