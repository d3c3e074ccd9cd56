import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FetchResult } from "../../src/fetching/index.js";
import { silentLogger } from "../../src/logging/index.js";
import {
  AdaptivePolicy,
  decodeHistory,
  estimatedRate,
  FixedPolicy,
  FOLLOW_BUDGET_EVERY_MS,
  type PageHistory,
  Recrawler,
  type RevisitPolicy,
  revisitsEndAt,
} from "../../src/recrawl/index.js";
import { GroupCommit, pageValue, StateStore } from "../../src/storage/index.js";
import { UrlFingerprinter } from "../../src/url/index.js";
import { ManualClock } from "../support/manual-clock.js";

const HOST = "http://a.test";
const URL_A = "http://a.test/a.html";
const INTERVAL_MS = 2000;

/** A 200 answer started at `startedAtMs` with validators. */
function answer(url: string, startedAtMs: number): FetchResult {
  return {
    url,
    ip: "127.1.0.1",
    status: 200,
    statusText: "OK",
    httpVersion: "1.1",
    requestTarget: new URL(url).pathname,
    requestHeaders: [],
    responseHeaders: [
      ["ETag", '"v1"'],
      ["Last-Modified", "Sat, 28 Nov 2026 10:00:00 GMT"],
    ],
    contentType: "text/html",
    rawBody: Buffer.from("<p>a</p>"),
    body: Buffer.from("<p>a</p>"),
    wireBytes: 8,
    truncated: false,
    startedAtMs,
    durationMs: 5,
  };
}

const CAPTURE = {
  digest: "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  original: { url: URL_A, date: "2026-11-28T10:00:00.000Z", recordId: "<urn:uuid:1>" },
};

describe("Recrawler (the revisit schedule, on an injected clock and a real state store)", () => {
  let dir: string;
  let store: StateStore;
  let committer: GroupCommit;
  let fingerprinter: UrlFingerprinter;
  let clock: ManualClock;
  let queued: { url: string; depth: number; host: string }[];
  let owned: boolean;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-recrawler-"));
    store = await StateStore.open(join(dir, "state"));
    committer = new GroupCommit((ops) => store.write(ops));
    fingerprinter = await UrlFingerprinter.create();
    clock = new ManualClock();
    queued = [];
    owned = true;
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  function recrawler(
    end?: number | { readonly horizonMs?: number; readonly untilMs?: number },
    policy: RevisitPolicy = new FixedPolicy(INTERVAL_MS),
  ): Recrawler {
    return new Recrawler(end === undefined ? {} : typeof end === "number" ? { horizonMs: end } : end, {
      store,
      committer,
      fingerprint: (url) => fingerprinter.fingerprint(url),
      queue: (url, depth, host) => queued.push({ url, depth, host }),
      owns: () => owned,
      policy,
      clock,
      logger: silentLogger,
    });
  }

  async function stored(url: string): Promise<PageHistory | undefined> {
    const value = await pageValue(store, HOST, fingerprinter.fingerprint(url));
    return value === undefined ? undefined : decodeHistory(value);
  }

  /**
   * A policy with a budget whose plans are `intervalMs` apart, and whose budget moves for page A when
   * told: `move(ratio)` makes the next asking (every FOLLOW_BUDGET_EVERY_MS) give A `ratio` times its
   * frequency. `asked` holds the times it was asked.
   */
  function movingBudget(intervalMs: number) {
    let ratio: number | undefined;
    const asked: number[] = [];
    const policy: RevisitPolicy = {
      nextIntervalMs: () => intervalMs,
      note: () => {},
      forget: () => {},
      sharing: () => ({ pages: 2, budget: 1 }),
      spending: () => 1,
      followBudget: () => {
        asked.push(clock.now());
        const moved = ratio;
        ratio = undefined;
        return moved === undefined
          ? undefined
          : new Map([[`${HOST} ${fingerprinter.fingerprint(URL_A)}`, moved]]);
      },
    };
    return {
      policy,
      asked,
      move: (to: number) => {
        ratio = to;
      },
    };
  }

  /**
   * Lets the due pages be read back and queued (store reads are real I/O): until `done` holds, or for
   * 200 ms of real time when nothing is expected.
   */
  async function settle(done: () => boolean = () => false): Promise<void> {
    const deadline = Date.now() + (done() ? 0 : 200);
    while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    await committer.commit();
  }

  it("plans a page's next visit with its history, and queues it again exactly when due", async () => {
    const schedule = recrawler();
    const history = schedule.visited(
      HOST,
      { url: URL_A, depth: 2 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    expect(history.nextAtMs).toBe(clock.now() + INTERVAL_MS);
    expect(history.etag).toBe('"v1"');
    await committer.commit();
    expect((await stored(URL_A))?.nextAtMs).toBe(history.nextAtMs);
    expect(schedule.plannedRevisits).toBe(1);
    clock.advance(INTERVAL_MS - 1);
    await settle();
    expect(queued).toEqual([]);
    expect(schedule.overdueMs()).toBe(0);
    clock.advance(1);
    await settle(() => queued.length > 0);
    expect(queued).toEqual([{ url: URL_A, depth: 2, host: HOST }]);
    expect(schedule.plannedRevisits).toBe(0);
    // The plan is cleared in the commit that queued it: a restart does not queue it twice.
    const after = await stored(URL_A);
    expect(after?.nextAtMs).toBeUndefined();
    expect(after?.visits).toBe(1);
  });

  it("counts a revisit's change and the time it was looked for in", async () => {
    const schedule = recrawler();
    const first = schedule.visited(
      HOST,
      { url: URL_A, depth: 0 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    clock.advance(INTERVAL_MS);
    const second = schedule.visited(
      HOST,
      { url: URL_A, depth: 0, revisit: true },
      answer(URL_A, clock.now()),
      { change: "changed", capture: CAPTURE },
      first,
    );
    expect([second.visits, second.changes, second.observedMs]).toEqual([2, 1, INTERVAL_MS]);
    clock.advance(INTERVAL_MS);
    const third = schedule.visited(
      HOST,
      { url: URL_A, depth: 0, revisit: true },
      { ...answer(URL_A, clock.now()), status: 304, responseHeaders: [] },
      { change: "not-modified", capture: CAPTURE },
      second,
    );
    // A 304 keeps the validators it did not repeat, and is no change.
    expect([third.visits, third.changes, third.observedMs, third.etag]).toEqual([
      3,
      1,
      2 * INTERVAL_MS,
      '"v1"',
    ]);
    expect(schedule.counts).toMatchObject({ revisited: 2, changed: 1, notModified: 1 });
  });

  it("reads its plans back after a restart, and skips a plan superseded by a later visit", async () => {
    const first = recrawler();
    first.visited(
      HOST,
      { url: URL_A, depth: 1 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    await committer.commit();
    first.stop();
    const noted: [string, number | undefined][] = [];
    const second = recrawler(undefined, {
      nextIntervalMs: () => INTERVAL_MS,
      note: (key, history) => noted.push([key, history.nextAtMs]),
      forget: () => {},
      sharing: () => ({ pages: 0, budget: 0 }),
      spending: () => 0,
      followBudget: () => undefined,
    });
    await second.load();
    expect(second.plannedRevisits).toBe(1);
    // Its policy shares the budget with the page again, its plan as it was.
    expect(noted).toEqual([[`${HOST} ${fingerprinter.fingerprint(URL_A)}`, clock.now() + INTERVAL_MS]]);
    clock.advance(INTERVAL_MS);
    await settle(() => queued.length > 0);
    expect(queued.map((entry) => entry.url)).toEqual([URL_A]);
    second.stop();
  });

  it("plans a revisit that failed for good again from the time it failed, its history kept", async () => {
    const schedule = recrawler();
    schedule.visited(
      HOST,
      { url: URL_A, depth: 1 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    await committer.commit();
    clock.advance(INTERVAL_MS);
    await settle(() => queued.length > 0);
    const history = (await stored(URL_A)) as PageHistory;
    clock.advance(700);
    schedule.missed(HOST, history, clock.now());
    await committer.commit();
    const after = await stored(URL_A);
    expect(after?.nextAtMs).toBe(clock.now() + INTERVAL_MS);
    expect([after?.visits, after?.etag]).toEqual([1, '"v1"']);
    expect(schedule.counts.missed).toBe(1);
    clock.advance(INTERVAL_MS);
    await settle(() => queued.length > 1);
    expect(queued.map((entry) => entry.url)).toEqual([URL_A, URL_A]);
  });

  it("plans nothing past the horizon, so a crawl with one ends: --recrawl-horizon from its start, or --recrawl-until when earlier", async () => {
    for (const end of [{ horizonMs: 3000 }, { horizonMs: 60_000, untilMs: clock.now() + 3000 }]) {
      const schedule = recrawler(end);
      clock.advance(1500);
      const history = schedule.visited(
        HOST,
        { url: URL_A, depth: 0 },
        answer(URL_A, clock.now()),
        {},
        undefined,
      );
      expect(history.nextAtMs).toBeUndefined();
      expect(schedule.plannedRevisits).toBe(0);
      await committer.commit();
      expect((await stored(URL_A))?.nextAtMs).toBeUndefined();
    }
    expect(revisitsEndAt({ untilMs: 5000 }, 1000)).toBe(5000);
    expect(revisitsEndAt({ horizonMs: 2000, untilMs: 5000 }, 1000)).toBe(3000);
    expect(revisitsEndAt({ horizonMs: 2000 }, 1000)).toBe(3000);
    expect(revisitsEndAt({}, 1000)).toBe(Number.POSITIVE_INFINITY);
  });

  it("drops at the horizon the plans not yet queued — one a shrunk budget pushed past it, one waiting for its host — so the crawl ends there", async () => {
    const URL_B = "http://b.test/b.html";
    const HOST_B = "http://b.test";
    const horizonMs = 3 * FOLLOW_BUDGET_EVERY_MS;
    const budget = movingBudget(2 * FOLLOW_BUDGET_EVERY_MS + 500);
    const schedule = recrawler(horizonMs, budget.policy);
    await schedule.load();
    const startMs = clock.now();
    const planA = schedule.visited(HOST, { url: URL_A, depth: 0 }, answer(URL_A, clock.now()), {}, undefined);
    clock.advance(500);
    const planB = schedule.visited(
      HOST_B,
      { url: URL_B, depth: 0 },
      answer(URL_B, clock.now()),
      {},
      undefined,
    );
    expect(planA.nextAtMs).toBe(startMs + 2500);
    expect(planB.nextAtMs).toBe(startMs + horizonMs);
    await committer.commit();
    // The cluster's budget halves (an agent left): page A's plan goes twice as far.
    budget.move(0.5);
    clock.advance(500);
    // B falls due while its host is another agent's: it waits for the host, past the horizon.
    owned = false;
    clock.advance(2000);
    await settle();
    expect(queued).toEqual([]);
    expect(schedule.plannedRevisits).toBe(2);
    clock.advance(1);
    await settle(() => schedule.plannedRevisits === 0);
    await settle();
    expect(queued).toEqual([]);
    expect(schedule.plannedRevisits).toBe(0);
    // Cleared in the store too: a restart plans nothing.
    expect((await stored(URL_A))?.nextAtMs).toBeUndefined();
    const storedB = await pageValue(store, HOST_B, fingerprinter.fingerprint(URL_B));
    expect(storedB === undefined ? undefined : decodeHistory(storedB).nextAtMs).toBeUndefined();
    expect(schedule.figures().queued).toBe(0);
    schedule.stop();
  });

  it("brings a plan nearer when the policy gives its page more of a grown budget (the wait left divided by new ÷ old), and queues it then", async () => {
    const URL_B = "http://a.test/b.html";
    // Page A's frequency doubles; page B (a sitemap's hint, say) keeps its plan.
    const { policy, asked, move } = movingBudget(10 * FOLLOW_BUDGET_EVERY_MS);
    const schedule = recrawler(undefined, policy);
    await schedule.load();
    const visit = (url: string) =>
      schedule.visited(HOST, { url, depth: 0 }, answer(url, clock.now()), {}, undefined).nextAtMs as number;
    const dueMs = visit(URL_A);
    expect(visit(URL_B)).toBe(dueMs);
    await committer.commit();
    // Asked every FOLLOW_BUDGET_EVERY_MS; the budget moves at the second asking.
    clock.advance(FOLLOW_BUDGET_EVERY_MS);
    expect(asked).toHaveLength(1);
    move(2);
    clock.advance(FOLLOW_BUDGET_EVERY_MS);
    expect(asked).toHaveLength(2);
    const movedAtMs = clock.now();
    const newDueMs = movedAtMs + (dueMs - movedAtMs) / 2;
    clock.advance(newDueMs - clock.now() - 1);
    await settle();
    expect(queued).toEqual([]);
    clock.advance(1);
    await settle(() => queued.length > 0);
    expect(queued).toEqual([{ url: URL_A, depth: 0, host: HOST }]);
    // Queued as its stored plan: cleared in the same commit.
    expect((await stored(URL_A))?.nextAtMs).toBeUndefined();
    // B's plan is where it was.
    clock.advance(dueMs - clock.now() - 1);
    await settle();
    expect(queued).toHaveLength(1);
    clock.advance(1);
    await settle(() => queued.length > 1);
    expect(queued.at(-1)).toEqual({ url: URL_B, depth: 0, host: HOST });
    schedule.stop();
    const before = asked.length;
    clock.advance(10 * FOLLOW_BUDGET_EVERY_MS);
    expect(asked).toHaveLength(before);
  });

  it("shares a cluster's revisit budget until its horizon, and then neither takes a share nor adds to it", () => {
    const schedule = recrawler(3000, {
      nextIntervalMs: () => INTERVAL_MS,
      note: () => {},
      forget: () => {},
      sharing: () => ({ pages: 40, budget: 2 }),
      spending: () => 2,
      followBudget: () => undefined,
    });
    expect(schedule.sharing()).toEqual({ pages: 40, budget: 2 });
    clock.advance(3000);
    expect(schedule.sharing()).toEqual({ pages: 40, budget: 2 });
    clock.advance(1);
    expect(schedule.sharing()).toEqual({ pages: 0, budget: 0 });
  });

  it("leaves the plan of a host another agent owns now in the store, unqueued until the host is its own again", async () => {
    const schedule = recrawler();
    schedule.visited(
      HOST,
      { url: URL_A, depth: 0 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    await committer.commit();
    owned = false;
    clock.advance(INTERVAL_MS);
    await settle();
    expect(queued).toEqual([]);
    expect((await stored(URL_A))?.nextAtMs).toBeDefined();
    // Looked at again 1 s later, then 2 s, …: queued once the host is this agent's again (never
    // handed over, so its plan was not cleared).
    clock.advance(1000);
    await settle();
    expect(queued).toEqual([]);
    owned = true;
    clock.advance(2000);
    await settle(() => queued.length > 0);
    expect(queued.map((entry) => entry.url)).toEqual([URL_A]);
  });
  /** A history of URL_A handed over: its last visit at `lastAtMs`, due at `nextAtMs` (none: unplanned). */
  const handed = (lastAtMs: number, nextAtMs?: number, visits = 2): PageHistory => ({
    url: URL_A,
    depth: 1,
    etag: '"v2"',
    capture: CAPTURE,
    visits,
    changes: 1,
    observedMs: 1000,
    lastAtMs,
    ...(nextAtMs === undefined ? {} : { nextAtMs }),
  });

  it("under adaptive, plans a page's first revisits by its sitemap changefreq and the later ones by its estimate, the hint kept with its history and handed over with it", async () => {
    const MIN_MS = 1000;
    const MAX_MS = 60_000;
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 100 }, clock);
    const schedule = recrawler(undefined, policy);
    let history = schedule.visited(
      HOST,
      { url: URL_A, depth: 1, changefreq: "always" },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    const intervals = [(history.nextAtMs ?? 0) - history.lastAtMs];
    // Revisited unchanged (a revisit is queued without the sitemap's traits: the history keeps the hint).
    for (let i = 0; i < 3; i++) {
      clock.advance(intervals[i] ?? 0);
      history = schedule.visited(
        HOST,
        { url: URL_A, depth: 1, revisit: true },
        answer(URL_A, clock.now()),
        { change: "unchanged", capture: CAPTURE },
        history,
      );
      intervals.push((history.nextAtMs ?? 0) - history.lastAtMs);
    }
    // The hint holds while one interval tells too little; from two on, never changed: no visit from
    // the allocation, looked at again after its visits' span (doubling it each time, up to the longest).
    expect(intervals).toEqual([MIN_MS, MIN_MS, 2 * MIN_MS, 4 * MIN_MS]);
    await committer.commit();
    expect((await stored(URL_A))?.changefreq).toBe("always");
    // A page handed over before its own estimate keeps following its hint at its new owner.
    const elsewhere = recrawler(
      undefined,
      new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 100 }, clock),
    );
    // (Handed over unplanned: it was queued for its revisit at its sender, so it is planned from its last visit.)
    const urlB = "http://a.test/b.html";
    const once = { url: urlB, depth: 1, visits: 1, changes: 0, observedMs: 0, lastAtMs: clock.now() };
    await elsewhere.adopt([{ host: HOST, histories: [{ ...once, changefreq: "never" }] }]);
    expect(await stored(urlB)).toMatchObject({ changefreq: "never", nextAtMs: clock.now() + MAX_MS });
  });

  it("keeps a handed-over page's plan and queues it when due, not before, and counts it received", async () => {
    const policy = new AdaptivePolicy({ minMs: 1000, maxMs: 60_000, budget: 100 }, clock);
    const schedule = recrawler(undefined, policy);
    const dueAtMs = clock.now() + 1500;
    expect(await schedule.adopt([{ host: HOST, histories: [handed(clock.now() - 500, dueAtMs)] }])).toBe(1);
    // Its policy takes the page in, its plan (2 s from its last visit) among the revisits planned.
    expect(policy.plannedRevisitsPerSecond()).toBeCloseTo(0.5, 12);
    // Durable once adopt resolves (it commits).
    expect(await stored(URL_A)).toMatchObject({ nextAtMs: dueAtMs, etag: '"v2"', visits: 2 });
    expect(schedule.plannedRevisits).toBe(1);
    expect(schedule.counts.received).toBe(1);
    clock.advance(1499);
    await settle();
    expect(queued).toEqual([]);
    clock.advance(1);
    await settle(() => queued.length > 0);
    expect(queued).toEqual([{ url: URL_A, depth: 1, host: HOST }]);
  });

  it("plans a page handed over without a plan (queued at its sender) from its last visit", async () => {
    const schedule = recrawler();
    const lastAtMs = clock.now() - INTERVAL_MS - 100;
    await schedule.adopt([{ host: HOST, histories: [handed(lastAtMs)] }]);
    // Overdue already: planned at its last visit plus the interval, and queued at once.
    expect((await stored(URL_A))?.nextAtMs).toBe(lastAtMs + INTERVAL_MS);
    clock.advance(0); // the manual clock fires a timer of 0 ms when moved
    await settle(() => queued.length > 0);
    expect(queued.map((entry) => entry.url)).toEqual([URL_A]);
  });

  it("keeps the history with the later visit, the one handed over on a tie, and plans the one kept once", async () => {
    const schedule = recrawler();
    const own = schedule.visited(
      HOST,
      { url: URL_A, depth: 1 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    await committer.commit();
    // An older history (another agent's from before): this agent's own, later one stays, its plan too.
    await schedule.adopt([{ host: HOST, histories: [handed(clock.now() - 10_000, clock.now() + 50)] }]);
    expect(await stored(URL_A)).toEqual(own);
    // The same visit handed back (the host went away and came back before it was due): one plan still.
    await schedule.adopt([{ host: HOST, histories: [{ ...own }] }]);
    clock.advance(INTERVAL_MS);
    await settle(() => queued.length > 0);
    await settle();
    expect(queued.map((entry) => entry.url)).toEqual([URL_A]);
    // A later one wins, with its plan; the plan superseded here is not queued.
    clock.advance(100);
    const later = handed(clock.now(), clock.now() + 5000, 3);
    await schedule.adopt([{ host: HOST, histories: [later] }]);
    expect(await stored(URL_A)).toEqual(later);
    clock.advance(5000);
    await settle(() => queued.length > 1);
    expect(queued.map((entry) => entry.url)).toEqual([URL_A, URL_A]);
  });

  it("estimates its share's freshness from its pages' rates and last visits, across a restart, without a host handed away", async () => {
    const schedule = recrawler();
    expect(schedule.figures()).toMatchObject({ estimatedFreshness: 0, freshnessPages: 0 });
    let previous: PageHistory | undefined;
    for (const change of [undefined, "changed", "unchanged"] as const) {
      previous = schedule.visited(
        HOST,
        { url: URL_A, depth: 0, ...(previous === undefined ? {} : { revisit: true }) },
        answer(URL_A, clock.now()),
        { capture: CAPTURE, ...(change === undefined ? {} : { change }) },
        previous,
      );
      clock.advance(INTERVAL_MS);
    }
    await committer.commit();
    const rate = estimatedRate(previous as PageHistory);
    const expected = Math.exp((-rate * INTERVAL_MS) / 1000);
    expect(schedule.figures().freshnessPages).toBe(1);
    expect(schedule.figures().estimatedFreshness).toBeCloseTo(expected, 12);
    schedule.stop();
    const restarted = recrawler();
    await restarted.load();
    expect(restarted.figures().estimatedFreshness).toBeCloseTo(expected, 12);
    await restarted.release(HOST);
    expect(restarted.figures()).toMatchObject({ estimatedFreshness: 0, freshnessPages: 0 });
    restarted.stop();
  });

  it("stops planning the pages of a host handed away, and hands their plans over intact before that", async () => {
    const forgotten: string[] = [];
    const schedule = recrawler(undefined, {
      nextIntervalMs: () => INTERVAL_MS,
      note: () => {},
      forget: (key) => forgotten.push(key),
      sharing: () => ({ pages: 0, budget: 0 }),
      spending: () => 0,
      followBudget: () => undefined,
    });
    schedule.visited(
      HOST,
      { url: URL_A, depth: 1 },
      answer(URL_A, clock.now()),
      { capture: CAPTURE },
      undefined,
    );
    await committer.commit();
    const sent = [];
    for await (const history of schedule.historiesOf(HOST, 0)) sent.push(history);
    expect(sent.map((history) => history.nextAtMs)).toEqual([clock.now() + INTERVAL_MS]);
    expect(await schedule.release(HOST)).toBe(1);
    // Its policy no longer shares the budget with the page.
    expect(forgotten).toEqual([`${HOST} ${fingerprinter.fingerprint(URL_A)}`]);
    await committer.commit();
    expect((await stored(URL_A))?.nextAtMs).toBeUndefined();
    // Still owned (a claim granted before the view changed here): its old plan is not queued.
    clock.advance(INTERVAL_MS);
    await settle();
    expect(queued).toEqual([]);
  });
});
