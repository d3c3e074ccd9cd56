import { expect, it } from "vitest";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { HandsChanges } from "../../src/agent/hands-changes.js";
import { HostRuntimes } from "../../src/agent/host-runtime.js";
import { type RequestWaitDeps, waitForRequest } from "../../src/agent/request-wait.js";
import { ipRelease } from "../../src/frontier/index.js";
import { silentLogger } from "../../src/logging/index.js";
import { RobotsRules } from "../../src/robots/robots-rules.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * The wait before a page's request, its last step: the address's slot. A slot that does not come (a
 * busy shared server, its authority's line) is waited for until the stop, or until a pause: then the
 * URL goes back to its queue (a leaving agent hands it over), holding nothing.
 */

const HOST = "a.test";
const RULES = new RobotsRules(
  { origin: `http://${HOST}`, status: "parsed", text: "", fetchedAtMs: 0, expiresAtMs: 86_400_000 },
  { userAgent: "ubicrawl", minCrawlDelayMs: 0, maxCrawlDelayMs: 3_600_000 },
);

/** Deps whose address slot comes only when the test grants it, or never; counts turns held. */
function setUp(pausedSignal?: () => AbortSignal | undefined, handedOver?: RequestWaitDeps["handedOver"]) {
  const clock = new ManualClock();
  const held = { turns: 0, slots: 0 };
  const grants: Array<() => void> = [];
  const deps: RequestWaitDeps = {
    clock,
    resolve: async () => "127.1.0.1",
    stats: new CrawlStats(clock),
    logger: silentLogger,
    ipGate: {
      crawlDelay: () => {},
      spacingWaitMs: () => 0,
      // Never free at once: each request waits for the grant the test gives.
      tryAcquire: () => undefined,
      acquire: (_ip, signal) =>
        new Promise((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
          grants.push(() => {
            held.slots++;
            resolve(
              ipRelease(
                () => held.slots--,
                () => true,
              ),
            );
          });
        }),
    },
    turns: {
      acquire: async () => {
        held.turns++;
        return () => held.turns--;
      },
    },
    waitingOf: () => 1,
    waitCut: () => false,
    ...(pausedSignal === undefined ? {} : { pausedSignal }),
    ...(handedOver === undefined ? {} : { handedOver }),
  };
  const state = new HostRuntimes().of(HOST);
  return { deps, state, held, grants };
}

it("puts the URL back at a pause while it waits for its address's slot, holding neither slot nor turn", async () => {
  const pause = new AbortController();
  const { deps, state, held } = setUp(() => pause.signal);
  const waiting = waitForRequest(HOST, state, RULES, new AbortController().signal, deps);
  await new Promise((resolve) => setImmediate(resolve));
  expect(held.turns).toBe(1);
  pause.abort();
  expect(await waiting).toEqual({ kind: "put-back", outcome: { kind: "yielded" } });
  expect(held).toEqual({ turns: 0, slots: 0 });
});

it("clears the request when the slot comes first, and still throws at the stop, not paused", async () => {
  const { deps, state, held, grants } = setUp(() => new AbortController().signal);
  const cleared = waitForRequest(HOST, state, RULES, new AbortController().signal, deps);
  await new Promise((resolve) => setImmediate(resolve));
  grants[0]?.();
  expect(await cleared).toMatchObject({ kind: "cleared", ip: "127.1.0.1" });
  expect(held).toEqual({ turns: 1, slots: 1 });

  const stop = new AbortController();
  const stopped = setUp(() => new AbortController().signal);
  const waiting = waitForRequest(HOST, stopped.state, RULES, stop.signal, stopped.deps);
  await new Promise((resolve) => setImmediate(resolve));
  stop.abort(new Error("stopped"));
  await expect(waiting).rejects.toThrow("stopped");
  expect(stopped.held).toEqual({ turns: 0, slots: 0 });
});

it("without a paused signal, waits through the pause as before (a lone caller with no scheduler)", async () => {
  const { deps, state, grants } = setUp();
  const waiting = waitForRequest(HOST, state, RULES, new AbortController().signal, deps);
  await new Promise((resolve) => setImmediate(resolve));
  grants[0]?.();
  expect(await waiting).toMatchObject({ kind: "cleared" });
});

it("puts the URL back when its host is handed to another agent while it waits for its address's slot", async () => {
  // A join makes a newcomer the host's owner, or a claim passes its crawl on: the slot may be seconds
  // away at a busy shared address, and a URL held here meanwhile is lost with this agent if it crashes
  // (a link it found itself is known nowhere else). Issue 35's process test lost such pages.
  const hands = new HandsChanges();
  let mine = true;
  const { deps, state, held } = setUp(
    () => new AbortController().signal,
    () => hands.watch(() => mine),
  );
  const waiting = waitForRequest(HOST, state, RULES, new AbortController().signal, deps);
  await new Promise((resolve) => setImmediate(resolve));
  // A change that leaves the host here goes unnoticed by the wait.
  hands.changed();
  await new Promise((resolve) => setImmediate(resolve));
  expect(held.turns).toBe(1);
  mine = false;
  hands.changed();
  expect(await waiting).toEqual({ kind: "put-back", outcome: { kind: "yielded" } });
  expect(held).toEqual({ turns: 0, slots: 0 });
  // Handed over already: not even asked to wait.
  const again = setUp(undefined, () => hands.watch(() => false));
  expect(await waitForRequest(HOST, again.state, RULES, new AbortController().signal, again.deps)).toEqual({
    kind: "put-back",
    outcome: { kind: "yielded" },
  });
  expect(again.held).toEqual({ turns: 0, slots: 0 });
});

it("takes a free slot at once, asking for no wait, unless the wait is cut already (a pause, a hand-over)", async () => {
  const free = setUp(() => new AbortController().signal);
  let tried = 0;
  const deps: RequestWaitDeps = {
    ...free.deps,
    ipGate: {
      ...free.deps.ipGate,
      tryAcquire: () => {
        tried++;
        free.held.slots++;
        return ipRelease(
          () => free.held.slots--,
          () => true,
        );
      },
    },
  };
  const cleared = await waitForRequest(HOST, free.state, RULES, new AbortController().signal, deps);
  expect(cleared).toMatchObject({ kind: "cleared", ip: "127.1.0.1" });
  expect(free.grants).toHaveLength(0);
  expect(free.held).toEqual({ turns: 1, slots: 1 });
  // Paused, or the host no longer this agent's: not taken at once, the slow path puts the URL back.
  const pause = new AbortController();
  pause.abort();
  const paused = await waitForRequest(HOST, free.state, RULES, new AbortController().signal, {
    ...deps,
    pausedSignal: () => pause.signal,
    waitCut: () => true,
  });
  expect(paused).toEqual({ kind: "put-back", outcome: { kind: "yielded" } });
  expect(tried).toBe(1);
  expect(free.held).toEqual({ turns: 1, slots: 1 });
});
