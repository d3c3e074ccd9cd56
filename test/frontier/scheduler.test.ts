import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  DEFAULT_MAX_ACTIVE_HOSTS,
  HostScheduler,
  type HostSchedulerOptions,
  type VisitOutcome,
  type WaitReason,
} from "../../src/frontier/scheduler.js";
import { type Deferred, deferred, flush, ManualClock } from "./helpers.js";

/** One running fake visit: the test ends it with an outcome or an error. */
interface Visit {
  readonly host: string;
  readonly signal: AbortSignal;
  readonly done: Deferred<VisitOutcome>;
}

/**
 * A scheduler driving fake visits. Each host has a count of waiting URLs (hasWork); visits stay
 * open until the test ends them, and the harness records concurrency per host and overall.
 */
class Harness {
  readonly clock = new ManualClock();
  readonly work = new Map<string, number>();
  /** Hosts visited at least once (the agent says unvisited for the others). */
  readonly visited = new Set<string>();
  readonly running: Visit[] = [];
  readonly started: string[] = [];
  readonly errors: Array<{ host: string; error: unknown }> = [];
  readonly perHost = new Map<string, number>();
  maxPerHost = 0;
  maxActive = 0;
  /** When set, visit() throws synchronously instead of returning a promise. */
  throwSync: Error | undefined;
  /** Called synchronously at the start of each visit. */
  onStart: ((host: string) => void) | undefined;
  readonly scheduler: HostScheduler;

  /** With `longestFirst`, the scheduler is told each host's queue length (as the agent does). */
  constructor(options: HostSchedulerOptions = {}, longestFirst = false) {
    this.scheduler = new HostScheduler(options, {
      clock: this.clock,
      hasWork: (host) => (this.work.get(host) ?? 0) > 0,
      ...(longestFirst
        ? {
            queueLength: (host: string) => this.work.get(host) ?? 0,
            unvisited: (host: string) => !this.visited.has(host),
          }
        : {}),
      onVisitError: (host, error) => this.errors.push({ host, error }),
      visit: (host, signal) => {
        this.onStart?.(host);
        if (this.throwSync) throw this.throwSync;
        const now = (this.perHost.get(host) ?? 0) + 1;
        this.perHost.set(host, now);
        this.maxPerHost = Math.max(this.maxPerHost, now);
        this.maxActive = Math.max(this.maxActive, this.running.length + 1);
        const visit: Visit = { host, signal, done: deferred<VisitOutcome>() };
        this.running.push(visit);
        this.started.push(host);
        return visit.done.promise.finally(() => {
          this.perHost.set(host, (this.perHost.get(host) ?? 1) - 1);
          this.running.splice(this.running.indexOf(visit), 1);
        });
      },
    });
  }

  /** Gives `host` `urls` waiting URLs and tells the scheduler. */
  addWork(host: string, urls = 1): void {
    this.work.set(host, (this.work.get(host) ?? 0) + urls);
    this.scheduler.markReady(host);
  }

  /** The running visit of `host`. */
  visitOf(host: string): Visit {
    const visit = this.running.find((v) => v.host === host);
    if (!visit) throw new Error(`${host} is not being visited`);
    return visit;
  }

  /** Ends `host`'s visit: it fetched `fetched` URLs and reports `outcome`. */
  async end(host: string, outcome: VisitOutcome, fetched = 1): Promise<void> {
    this.work.set(host, Math.max(0, (this.work.get(host) ?? 0) - fetched));
    this.visited.add(host);
    this.visitOf(host).done.resolve(outcome);
    await flush();
  }

  /** Ends the oldest running visit by fetching one URL and yielding (drained when none is left). */
  async step(): Promise<string> {
    const visit = this.running[0];
    if (!visit) throw new Error("nothing running");
    const left = (this.work.get(visit.host) ?? 0) - 1;
    await this.end(visit.host, left > 0 ? { kind: "yielded" } : { kind: "drained" });
    return visit.host;
  }

  get runningHosts(): string[] {
    return this.running.map((v) => v.host);
  }
}

let harness: Harness | undefined;

function setUp(options?: HostSchedulerOptions, longestFirst = false): Harness {
  harness = new Harness(options, longestFirst);
  return harness;
}

afterEach(async () => {
  if (!harness) return;
  for (const visit of harness.running) visit.done.resolve({ kind: "drained" });
  await harness.scheduler.stop();
  harness = undefined;
});

describe("HostScheduler options", () => {
  it("rejects a maxActiveHosts that is not a positive integer", () => {
    for (const maxActiveHosts of [0, -3, 2.5, Number.NaN]) {
      let error: unknown;
      try {
        new HostScheduler(
          { maxActiveHosts },
          { visit: async () => ({ kind: "drained" }), hasWork: () => false, onVisitError: () => {} },
        );
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
    }
    expect(DEFAULT_MAX_ACTIVE_HOSTS).toBe(256);
  });
});

describe("HostScheduler visits", () => {
  it("never visits one host twice at once, however often it is marked ready", async () => {
    const h = setUp({ maxActiveHosts: 4 });
    h.addWork("a.test", 5);
    expect(h.runningHosts).toEqual(["a.test"]);
    for (let i = 0; i < 10; i++) h.scheduler.markReady("a.test");
    h.addWork("a.test", 3);
    expect(h.started).toEqual(["a.test"]);
    expect(h.scheduler.readyHosts).toBe(0);
    // The visit yields with work left: exactly one new visit follows.
    for (let round = 0; round < 7; round++) {
      h.scheduler.markReady("a.test");
      await h.step();
      h.scheduler.markReady("a.test");
      expect(h.running.filter((v) => v.host === "a.test").length).toBeLessThanOrEqual(1);
    }
    await h.step(); // the eighth and last URL: drained
    expect(h.started).toEqual(Array(8).fill("a.test"));
    expect(h.maxPerHost).toBe(1);
    expect(h.scheduler.isIdle).toBe(true);
  });

  it("with deferVisits, visits nothing marked ready until it begins, then as many as it may, in order", async () => {
    const h = setUp({ maxActiveHosts: 2, deferVisits: true });
    for (const host of ["a.test", "b.test", "c.test"]) h.addWork(host);
    await flush();
    expect(h.started).toEqual([]);
    expect(h.scheduler.readyHosts).toBe(3);
    h.scheduler.pause();
    h.scheduler.resume(); // a resume (the disk taking writes again) is no beginning
    expect(h.started).toEqual([]);
    h.scheduler.beginVisits();
    expect(h.runningHosts).toEqual(["a.test", "b.test"]);
  });

  it("visits at most maxActiveHosts hosts at once, the others first come, first served", async () => {
    const h = setUp({ maxActiveHosts: 3 });
    const hosts = Array.from({ length: 10 }, (_, i) => `h${i}.test`);
    for (const host of hosts) h.addWork(host);
    expect(h.runningHosts).toEqual(["h0.test", "h1.test", "h2.test"]);
    expect(h.scheduler.activeHosts).toBe(3);
    expect(h.scheduler.readyHosts).toBe(7);
    await h.end("h1.test", { kind: "drained" });
    expect(h.runningHosts).toEqual(["h0.test", "h2.test", "h3.test"]);
    while (h.running.length > 0) await h.step();
    expect(h.started).toEqual(hosts);
    expect(h.maxActive).toBe(3);
    expect(h.scheduler.isIdle).toBe(true);
  });

  it("sends a host that yielded with work left behind the hosts already waiting", async () => {
    const h = setUp({ maxActiveHosts: 1 });
    h.addWork("a.test", 3);
    h.addWork("b.test", 2);
    h.addWork("c.test", 1);
    while (h.running.length > 0) await h.step();
    expect(h.started).toEqual(["a.test", "b.test", "c.test", "a.test", "b.test", "a.test"]);
  });

  it("does not revisit a drained host until it has work again, and revisits one that got work meanwhile", async () => {
    const h = setUp({ maxActiveHosts: 2 });
    h.addWork("a.test");
    await h.end("a.test", { kind: "drained" });
    expect(h.scheduler.isIdle).toBe(true);
    h.scheduler.markReady("a.test");
    expect(h.started).toEqual(["a.test", "a.test"]);
    // Work arrives during the visit (markReady is ignored then); the visit reports drained anyway.
    h.addWork("a.test", 1);
    await h.end("a.test", { kind: "drained" }, 0);
    expect(h.runningHosts).toEqual(["a.test"]);
    await h.end("a.test", { kind: "drained" });
    expect(h.scheduler.isIdle).toBe(true);
  });

  it("ignores a markReady of the visited host made synchronously from inside its visit", async () => {
    const h = setUp({ maxActiveHosts: 4 });
    // E.g. a visit whose first step queues a link to its own host.
    h.onStart = (host) => h.addWork(host);
    h.addWork("a.test");
    expect(h.started).toEqual(["a.test"]);
    expect(h.maxPerHost).toBe(1);
    h.onStart = undefined;
    await h.end("a.test", { kind: "yielded" });
    expect(h.runningHosts).toEqual(["a.test"]); // work was left: visited again, once
  });

  it("gives each visit its own host and a signal that is not aborted", () => {
    const h = setUp({ maxActiveHosts: 2 });
    h.addWork("a.test");
    h.addWork("b.test");
    expect(h.running.map((v) => [v.host, v.signal.aborted])).toEqual([
      ["a.test", false],
      ["b.test", false],
    ]);
  });
});

describe("HostScheduler: longest queue first", () => {
  it("starts a host never visited before one known to hold about a quantum: its first page tells its size", async () => {
    const h = setUp({ maxActiveHosts: 1, unvisitedRank: 64 }, true);
    h.addWork("busy.test");
    h.visited.add("known.test");
    h.addWork("known.test", 100);
    h.addWork("fresh.test", 1);
    await h.end("busy.test", { kind: "drained" });
    expect(h.runningHosts).toEqual(["fresh.test"]);
    await h.end("fresh.test", { kind: "drained" });
    expect(h.runningHosts).toEqual(["known.test"]);
  });

  it("starts a host known to hold more than two quanta before the hosts never visited", async () => {
    const h = setUp({ maxActiveHosts: 1, unvisitedRank: 64 }, true);
    h.addWork("busy.test");
    h.visited.add("big.test");
    h.addWork("fresh.test", 1);
    h.addWork("big.test", 500);
    await h.end("busy.test", { kind: "drained" });
    expect(h.runningHosts).toEqual(["big.test"]);
    // Its quantum used, it goes back ahead of the unvisited host while it still holds that much.
    await h.end("big.test", { kind: "yielded" });
    expect(h.runningHosts).toEqual(["big.test"]);
    // 9 URLs left: now the unvisited host goes first.
    await h.end("big.test", { kind: "yielded" }, 490);
    expect(h.runningHosts).toEqual(["fresh.test"]);
  });

  it("starts the longest queue first, whatever order the hosts became ready in", async () => {
    const h = setUp({ maxActiveHosts: 1 }, true);
    for (const host of ["small.test", "big.test", "mid.test", "tiny.test"]) h.visited.add(host);
    h.addWork("busy.test", 1);
    for (const [host, urls] of [
      ["small.test", 2],
      ["big.test", 6_000],
      ["mid.test", 40],
      ["tiny.test", 1],
    ] as const) {
      h.addWork(host, urls);
    }
    expect(h.scheduler.longestReadyQueue).toBe(4_096);
    await h.end("busy.test", { kind: "drained" });
    expect(h.runningHosts).toEqual(["big.test"]);
    // big.test keeps the slot while its queue is the longest: it yields with 5,999 left and is next again.
    await h.end("big.test", { kind: "yielded" }, 1);
    expect(h.runningHosts).toEqual(["big.test"]);
    await h.end("big.test", { kind: "drained" }, 5_999);
    expect(h.runningHosts).toEqual(["mid.test"]);
    await h.end("mid.test", { kind: "drained" }, 40);
    expect(h.runningHosts).toEqual(["small.test"]);
    await h.end("small.test", { kind: "drained" }, 2);
    expect(h.runningHosts).toEqual(["tiny.test"]);
  });

  it("moves a waiting host up when its queue grows past the others, not while it stays in its class", async () => {
    const h = setUp({ maxActiveHosts: 1 }, true);
    for (const host of ["a.test", "b.test", "c.test"]) h.visited.add(host);
    h.addWork("busy.test");
    h.addWork("a.test", 8);
    h.addWork("b.test", 8);
    h.addWork("c.test", 2);
    // Grows within its class (2–3): keeps its place behind the longer queues.
    h.work.set("c.test", 3);
    h.scheduler.queueGrew("c.test");
    h.work.set("c.test", 100);
    h.scheduler.queueGrew("c.test");
    // A host not waiting for a slot is not added by a growth.
    h.scheduler.queueGrew("unknown.test");
    expect(h.scheduler.readyHosts).toBe(3);
    await h.end("busy.test", { kind: "drained" });
    expect(h.runningHosts).toEqual(["c.test"]);
    await h.end("c.test", { kind: "drained" }, 100);
    // Equal classes: first come, first served.
    expect(h.runningHosts).toEqual(["a.test"]);
  });

  it("serves hosts of one class in turn (round robin among queues of about the same length)", async () => {
    const h = setUp({ maxActiveHosts: 1 }, true);
    // All three stay within 8–15 URLs for the two rounds.
    h.addWork("a.test", 12);
    h.addWork("b.test", 13);
    h.addWork("c.test", 14);
    for (let i = 0; i < 6; i++) await h.step();
    expect(h.started).toEqual(["a.test", "b.test", "c.test", "a.test", "b.test", "c.test", "a.test"]);
  });
});

describe("HostScheduler parking", () => {
  it("brings a parked host back once its time has come, not before", async () => {
    const h = setUp({ maxActiveHosts: 2 });
    h.addWork("a.test", 2);
    await h.end("a.test", { kind: "parked", untilMs: h.clock.now() + 10_000, reason: "robots" }, 0);
    expect(h.scheduler.parkedHosts).toBe(1);
    expect(h.scheduler.isIdle).toBe(false);
    h.scheduler.markReady("a.test"); // ignored while parked
    h.addWork("a.test");
    expect(h.running).toHaveLength(0);
    h.addWork("b.test"); // other hosts go on meanwhile
    expect(h.runningHosts).toEqual(["b.test"]);
    h.clock.advance(9_999);
    await flush();
    expect(h.runningHosts).toEqual(["b.test"]);
    h.clock.advance(1);
    await flush();
    expect(h.runningHosts).toEqual(["b.test", "a.test"]);
    expect(h.scheduler.parkedHosts).toBe(0);
  });

  it("forgets a parked host whose work is gone when its timer fires, until it is marked ready", async () => {
    const h = setUp();
    h.addWork("a.test");
    await h.end("a.test", { kind: "parked", untilMs: h.clock.now() + 500, reason: "robots" }, 0);
    h.work.set("a.test", 0); // e.g. its URLs were handed to another agent
    h.clock.advance(500);
    await flush();
    expect(h.started).toEqual(["a.test"]);
    expect(h.scheduler.isIdle).toBe(true);
    h.addWork("a.test");
    expect(h.started).toEqual(["a.test", "a.test"]);
  });

  it("wakes at once hosts parked for the given reasons, and only those: visited if they have work, forgotten if not", async () => {
    const h = setUp({ maxActiveHosts: 4 });
    for (const host of ["held.test", "gone.test", "robots.test"]) h.addWork(host);
    const later = h.clock.now() + 60_000;
    await h.end("held.test", { kind: "parked", untilMs: later, reason: "held" }, 0);
    await h.end("gone.test", { kind: "parked", untilMs: later, reason: "hand-over" }, 0);
    await h.end("robots.test", { kind: "parked", untilMs: later, reason: "robots" }, 0);
    h.work.set("gone.test", 0); // its URLs went to the host's owner
    h.scheduler.wakeParked(new Set(["held", "hand-over"]));
    await flush();
    expect(h.runningHosts).toEqual(["held.test"]);
    expect(h.scheduler.parkedHosts).toBe(1);
    expect(h.scheduler.waiting().map((w) => w.reason)).toEqual(["robots"]);
    // The woken hosts' timers are gone: nothing runs again when they would have fired.
    await h.end("held.test", { kind: "drained" }, 1);
    h.clock.advance(60_000);
    await flush();
    expect(h.started).toEqual(["held.test", "gone.test", "robots.test", "held.test", "robots.test"]);
  });

  it("treats a parking time in the past as due at once", async () => {
    const h = setUp();
    h.addWork("a.test");
    await h.end("a.test", { kind: "parked", untilMs: h.clock.now() - 1_000, reason: "robots" }, 0);
    expect(h.scheduler.parkedHosts).toBe(1);
    h.clock.advance(0);
    await flush();
    expect(h.started).toEqual(["a.test", "a.test"]);
  });
});

describe("HostScheduler failures", () => {
  it("reports a visit that rejects, parks the host, and retries it later", async () => {
    const h = setUp();
    h.addWork("a.test");
    const boom = new Error("storage on fire");
    h.visitOf("a.test").done.reject(boom);
    await flush();
    expect(h.errors).toEqual([{ host: "a.test", error: boom }]);
    expect(h.scheduler.activeHosts).toBe(0);
    expect(h.scheduler.parkedHosts).toBe(1);
    h.clock.advance(4_999);
    await flush();
    expect(h.started).toEqual(["a.test"]);
    h.clock.advance(1);
    await flush();
    expect(h.started).toEqual(["a.test", "a.test"]);
  });

  it("reports a visit that throws synchronously and does not leave the host stuck as active", async () => {
    const h = setUp();
    const boom = new Error("bug");
    h.throwSync = boom;
    h.addWork("a.test");
    await flush();
    expect(h.errors).toEqual([{ host: "a.test", error: boom }]);
    expect(h.scheduler.activeHosts).toBe(0);
    expect(h.scheduler.parkedHosts).toBe(1);
    h.throwSync = undefined;
    h.clock.advance(5_000);
    await flush();
    expect(h.runningHosts).toEqual(["a.test"]);
    await h.end("a.test", { kind: "drained" });
    expect(h.scheduler.isIdle).toBe(true);
  });
});

describe("HostScheduler pause, resume and stop", () => {
  it("starts no visit while paused and catches up on resume", async () => {
    const h = setUp({ maxActiveHosts: 2 });
    h.addWork("a.test", 2);
    h.scheduler.pause();
    expect(h.scheduler.isPaused).toBe(true);
    h.addWork("b.test");
    h.addWork("c.test");
    expect(h.runningHosts).toEqual(["a.test"]); // the running visit is not interrupted
    await h.end("a.test", { kind: "yielded" });
    expect(h.running).toHaveLength(0);
    expect(h.scheduler.readyHosts).toBe(3);
    expect(h.scheduler.isIdle).toBe(false);
    h.scheduler.resume();
    expect(h.scheduler.isPaused).toBe(false);
    expect(h.runningHosts).toEqual(["b.test", "c.test"]);
    while (h.running.length > 0) await h.step();
    expect(h.started).toEqual(["a.test", "b.test", "c.test", "a.test"]);
  });

  it("aborts its paused signal at a pause, and gives a fresh one from the resume on", () => {
    const h = setUp({});
    const running = h.scheduler.pausedSignal;
    expect(running.aborted).toBe(false);
    h.scheduler.pause();
    expect(running.aborted).toBe(true);
    expect(h.scheduler.pausedSignal.aborted).toBe(true);
    h.scheduler.pause(); // paused already: the same signal
    expect(h.scheduler.pausedSignal).toBe(running);
    h.scheduler.resume();
    const resumed = h.scheduler.pausedSignal;
    expect(resumed.aborted).toBe(false);
    h.scheduler.resume(); // not paused: the same signal
    expect(h.scheduler.pausedSignal).toBe(resumed);
    h.scheduler.pause();
    expect(resumed.aborted).toBe(true);
  });

  it("aborts running visits on stop, waits for them to end, and starts nothing after", async () => {
    const h = setUp({ maxActiveHosts: 2 });
    h.addWork("a.test");
    h.addWork("b.test");
    h.addWork("c.test");
    const [a, b] = h.running;
    let stopped = false;
    const stopping = h.scheduler.stop().then(() => {
      stopped = true;
    });
    expect(a?.signal.aborted).toBe(true);
    expect(b?.signal.aborted).toBe(true);
    await flush();
    expect(stopped).toBe(false); // still waiting for both visits
    a?.done.resolve({ kind: "yielded" });
    await flush();
    expect(stopped).toBe(false);
    b?.done.reject(b.signal.reason); // an aborted visit typically rejects with the signal's reason
    await stopping;
    expect(h.started).toEqual(["a.test", "b.test"]); // c.test never started
    expect(h.errors).toEqual([]); // failures caused by stopping are not errors
    h.addWork("d.test");
    h.scheduler.markReady("c.test");
    expect(h.running).toHaveLength(0);
    expect(h.scheduler.isIdle).toBe(true);
    await h.scheduler.stop(); // idempotent
  });

  it("cancels parking timers on stop", async () => {
    const h = setUp();
    h.addWork("a.test");
    await h.end("a.test", { kind: "parked", untilMs: h.clock.now() + 1_000, reason: "robots" }, 0);
    expect(h.clock.pending).toBe(1);
    await h.scheduler.stop();
    expect(h.clock.pending).toBe(0);
    expect(h.scheduler.parkedHosts).toBe(0);
    h.clock.advance(2_000);
    await flush();
    expect(h.started).toEqual(["a.test"]);
  });

  it("is idle only when no host is active, ready or parked", async () => {
    const h = setUp({ maxActiveHosts: 1 });
    expect(h.scheduler.isIdle).toBe(true);
    h.addWork("a.test");
    h.addWork("b.test");
    expect(h.scheduler.isIdle).toBe(false);
    await h.end("a.test", { kind: "drained" });
    expect(h.scheduler.isIdle).toBe(false); // b.test active
    await h.end("b.test", { kind: "parked", untilMs: h.clock.now() + 100, reason: "robots" }, 0);
    expect([h.scheduler.activeHosts, h.scheduler.readyHosts, h.scheduler.parkedHosts]).toEqual([0, 0, 1]);
    expect(h.scheduler.isIdle).toBe(false);
    h.clock.advance(100);
    await flush();
    await h.end("b.test", { kind: "drained" });
    expect(h.scheduler.isIdle).toBe(true);
  });
});

describe("HostScheduler edges (issue 19: mutation survivors)", () => {
  it("changes maxActiveHosts at run time: more visits start at once, fewer let running ones end; a bad value is refused", async () => {
    const h = setUp({ maxActiveHosts: 1 });
    for (const host of ["a", "b", "c", "d"]) h.addWork(host, 5);
    await flush();
    expect(h.runningHosts).toEqual(["a"]);
    h.scheduler.setMaxActiveHosts(3);
    await flush();
    expect(h.runningHosts).toEqual(["a", "b", "c"]);
    // Fewer: nothing is stopped, and no visit starts until the count is under the new limit.
    h.scheduler.setMaxActiveHosts(2);
    await h.end("a", { kind: "yielded" });
    expect(h.runningHosts).toEqual(["b", "c"]);
    await h.end("b", { kind: "yielded" });
    expect(h.runningHosts).toEqual(["c", "d"]);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      let error: unknown;
      try {
        h.scheduler.setMaxActiveHosts(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isUbiError(error, ErrorCode.InvalidArgument), String(bad)).toBe(true);
      expect((error as Error).message).toBe(`maxActiveHosts must be a positive integer, got ${bad}`);
    }
    expect(h.scheduler.activeHosts).toBe(2);
  });

  it("lowers maxActiveHosts at run time to one, the smallest allowed: one visit at a time after", async () => {
    const h = setUp({ maxActiveHosts: 2 });
    for (const host of ["a", "b", "c"]) h.addWork(host, 5);
    await flush();
    expect(h.runningHosts).toEqual(["a", "b"]);
    h.scheduler.setMaxActiveHosts(1);
    await h.end("a", { kind: "yielded" });
    expect(h.runningHosts).toEqual(["b"]);
    await h.end("b", { kind: "yielded" });
    expect(h.runningHosts).toEqual(["c"]);
    expect(h.maxActive).toBe(2);
  });

  it("names the bad maxActiveHosts in its error", () => {
    expect(
      () =>
        new HostScheduler(
          { maxActiveHosts: 0 },
          { visit: async () => ({ kind: "drained" }), hasWork: () => false, onVisitError: () => {} },
        ),
    ).toThrow("maxActiveHosts must be a positive integer, got 0");
  });

  it("counts parked hosts by reason, with the soonest time of each, most hosts first", async () => {
    const h = setUp({ maxActiveHosts: 10 });
    const now = h.clock.now();
    const parks: Array<[string, WaitReason, number]> = [
      ["r1.test", "retry", 700],
      ["b1.test", "robots", 5_000],
      ["h1.test", "held", 900],
      ["b2.test", "robots", 2_000],
      ["h2.test", "held", 300],
      ["b3.test", "robots", 8_000],
    ];
    for (const [host] of parks) h.addWork(host);
    for (const [host, reason, delay] of parks) {
      await h.end(host, { kind: "parked", untilMs: now + delay, reason }, 0);
    }
    expect(h.scheduler.waiting()).toStrictEqual([
      { reason: "robots", hosts: 3, nextAtMs: now + 2_000 },
      { reason: "held", hosts: 2, nextAtMs: now + 300 },
      { reason: "retry", hosts: 1, nextAtMs: now + 700 },
    ]);
  });

  it("parks a host whose visit failed for the reason error", async () => {
    const h = setUp();
    h.addWork("a.test");
    h.visitOf("a.test").done.reject(new Error("disk gone"));
    await flush();
    expect(h.scheduler.waiting()).toStrictEqual([
      { reason: "error", hosts: 1, nextAtMs: h.clock.now() + 5_000 },
    ]);
  });

  it("lets running visits finish within the grace period before aborting them", async () => {
    const h = setUp();
    h.addWork("a.test");
    h.addWork("b.test");
    const [a, b] = h.running;
    let stopped = false;
    const stopping = h.scheduler.stop(1_000).then(() => {
      stopped = true;
    });
    expect(h.scheduler.isPaused).toBe(true);
    await flush();
    expect([a?.signal.aborted, b?.signal.aborted]).toEqual([false, false]);
    a?.done.resolve({ kind: "yielded" });
    h.clock.advance(999);
    await flush();
    expect([b?.signal.aborted, stopped]).toEqual([false, false]);
    h.clock.advance(1);
    expect(b?.signal.aborted).toBe(true);
    const reason = b?.signal.reason;
    expect(isUbiError(reason, ErrorCode.Stopped)).toBe(true);
    expect((reason as Error).message).toBe("scheduler stopped");
    b?.done.reject(reason);
    await stopping;
    expect(h.clock.pending).toBe(0);
  });

  it("aborts its paused signal at the stop: a visit waiting on it (a robots.txt answer) ends, and the stop with it", async () => {
    const h = setUp();
    h.addWork("a.test");
    const [a] = h.running;
    // The visit waits for what only a pause (or its own end) would cut short: here, the paused signal.
    const waiting = h.scheduler.pausedSignal;
    waiting.addEventListener("abort", () => a?.done.resolve({ kind: "yielded" }), { once: true });
    let stopped = false;
    const stopping = h.scheduler.stop(60_000).then(() => {
      stopped = true;
    });
    expect(waiting.aborted).toBe(true);
    expect(isUbiError(waiting.reason, ErrorCode.Stopped)).toBe(true);
    await stopping;
    expect(stopped).toBe(true);
    // Stopped for good: a resume starts nothing and gives no fresh signal.
    h.scheduler.resume();
    expect(h.scheduler.pausedSignal.aborted).toBe(true);
    h.addWork("b.test");
    expect(h.running).toEqual([]);
  });

  it("clears the grace timer when the visits end in time", async () => {
    const h = setUp();
    h.addWork("a.test");
    const [a] = h.running;
    const stopping = h.scheduler.stop(60_000);
    expect(h.clock.pending).toBe(1);
    a?.done.resolve({ kind: "drained" });
    await stopping;
    expect(h.clock.pending).toBe(0);
    // Stopped for good: the signal is aborted once stop returns.
    expect(a?.signal.aborted).toBe(true);
  });

  it("serves hosts first come, first served over thousands of turns of the ready line", async () => {
    const h = setUp({ maxActiveHosts: 1 });
    const hosts = Array.from({ length: 1_500 }, (_, i) => `t${i}.test`);
    for (const host of hosts) h.addWork(host, 2);
    // Each visit fetches one URL and yields: every host goes round the line twice, in the same order.
    const order: string[] = [];
    while (h.running.length > 0) order.push(await h.step());
    expect(order).toEqual([...hosts, ...hosts]);
    expect(h.scheduler.isIdle).toBe(true);
  });
});
