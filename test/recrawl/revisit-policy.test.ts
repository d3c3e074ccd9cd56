import { describe, expect, it } from "vitest";
import {
  AdaptivePolicy,
  ESTIMATE_REACH,
  estimateChangeRate,
  estimateChangeRateFromLastModified,
  estimatedRate,
  FixedPolicy,
  FOLLOW_BUDGET_BEYOND,
  HINT_SPAN,
  hintedPeriodMs,
  MIN_INTERVALS_FOR_ESTIMATE,
  optimalFrequencies,
  proportionalFrequencies,
  revisitPolicy,
  validateRecrawlOptions,
} from "../../src/recrawl/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { regularHistory } from "../support/page-histories.js";

const MIN_MS = 1000;
const MAX_MS = 3_600_000;

describe("estimatedRate", () => {
  const dated = { intervals: 5, changes: 4, exposureMs: 90_000, trusted: true };

  it("reads the Last-Modified dates when they span enough intervals and were never contradicted", () => {
    const page = { ...regularHistory(6, 2, 60_000), lastModifiedRecord: dated };
    expect(estimatedRate(page)).toBeCloseTo(estimateChangeRateFromLastModified(5, 4, 90), 12);
  });

  it("falls back on the visits when the dates are too few, or untrusted", () => {
    const visitsOnly = estimateChangeRate(5, 2, 60);
    expect(
      estimatedRate({ ...regularHistory(6, 2, 60_000), lastModifiedRecord: { ...dated, intervals: 1 } }),
    ).toBeCloseTo(visitsOnly, 12);
    expect(
      estimatedRate({ ...regularHistory(6, 2, 60_000), lastModifiedRecord: { ...dated, trusted: false } }),
    ).toBeCloseTo(visitsOnly, 12);
    expect(estimatedRate(regularHistory(2, 1, 60_000))).toBeNaN();
  });
});

describe("FixedPolicy", () => {
  it("gives every page the interval", () => {
    expect(new FixedPolicy(2000).nextIntervalMs()).toBe(2000);
  });
});

describe("AdaptivePolicy", () => {
  it("sends a page that never changed to the longest interval once its visits span it", () => {
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 1 }, new ManualClock());
    expect(policy.nextIntervalMs("still", regularHistory(6, 0, MAX_MS / 5))).toBe(MAX_MS);
    expect(policy.rateOf("still")).toBe(0);
  });

  it("looks at a page found unchanged on a short history again after its history's span, not at the maximum for good", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 1 }, clock);
    // Two intervals of a minute found no change: the estimate is 0, the allocation gives no visit.
    expect(policy.nextIntervalMs("still", regularHistory(3, 0, 60_000))).toBe(ESTIMATE_REACH * 120_000);
    clock.advance(1000);
    expect(policy.rateOf("still")).toBe(0);
    // Found unchanged again: the span, and the interval, doubled; then the maximum.
    expect(policy.nextIntervalMs("still", regularHistory(4, 0, 80_000))).toBe(ESTIMATE_REACH * 240_000);
    expect(policy.nextIntervalMs("still", regularHistory(5, 0, MAX_MS / 2))).toBe(MAX_MS);
  });

  it("looks again at a page the allocation dropped, so that a later allocation can give it visits", () => {
    const clock = new ManualClock();
    const budget = 0.005;
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget }, clock);
    // Changed at both of its first two revisits a minute apart: it looks too fast for the budget next
    // to nine pages changing about every 20 minutes, and gets no visit from the allocation.
    const young = regularHistory(3, 2, 60_000);
    const slow = regularHistory(11, 1, 120_000);
    for (let i = 0; i < 9; i++) policy.nextIntervalMs(`s${i}`, slow);
    policy.nextIntervalMs("young", young);
    clock.advance(1000);
    const rates = [...Array(9).fill(estimateChangeRate(10, 1, 120)), estimateChangeRate(2, 2, 60)];
    expect(optimalFrequencies(rates, budget)[9]).toBe(0);
    // It is looked at again after its even share's interval (its span being shorter), not left at the
    // maximum whatever it does next.
    expect(policy.nextIntervalMs("young", young)).toBe(1000 / (budget / 10));
    expect(1000 / (budget / 10)).toBeLessThan(MAX_MS);
  });

  it("takes the visits of pages looked at on their span's reach off the other pages' part of the budget", () => {
    const clock = new ManualClock();
    const budget = 0.5;
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget }, clock);
    const still = regularHistory(3, 0, 5_000);
    const changing = regularHistory(11, 5, 2_000);
    let stillMs = 0;
    let changingMs = 0;
    // Each reallocation (a second apart) takes off what the reaches took beyond the last one's; the
    // plans falling short on the way raise the allocation a little, and it comes back down slowly.
    for (let i = 0; i < 300; i++) {
      stillMs = policy.nextIntervalMs("still", still);
      changingMs = policy.nextIntervalMs("changing", changing);
      clock.advance(1000);
    }
    // The still page comes back after its span (10 s; its even share's interval is 4 s), the
    // changing one gets the rest: the budget is spent, not more.
    expect(stillMs).toBe(ESTIMATE_REACH * 10_000);
    expect(Math.abs((1000 / stillMs + 1000 / changingMs) / budget - 1)).toBeLessThan(0.011);
  });

  it("raises the allocation when the revisits planned fall short of the budget, so that they spend it", () => {
    const clock = new ManualClock();
    const budget = 0.1;
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget }, clock);
    const changing = regularHistory(11, 5, 10_000);
    let cMs = 0;
    for (let i = 0; i < 2; i++) {
      policy.nextIntervalMs("a", changing);
      policy.nextIntervalMs("b", changing);
      cMs = policy.nextIntervalMs("c", changing);
      clock.advance(1000);
    }
    // Three pages alike: a third of the budget each. Then "a" is found never to change (its visits
    // span the maximum) and "b" gets its part, but "c" keeps the plan it was given at its last visit
    // (it is not visited again here): the plans fall short of the budget by a sixth.
    expect(1000 / cMs).toBeCloseTo(budget / 3, 9);
    const aMs = policy.nextIntervalMs("a", regularHistory(6, 0, MAX_MS / 5));
    expect(aMs).toBe(MAX_MS);
    let bMs = 0;
    for (let i = 0; i < 300; i++) {
      clock.advance(1000);
      bMs = policy.nextIntervalMs("b", changing);
    }
    const planned = 1000 / aMs + 1000 / bMs + 1000 / cMs;
    expect(policy.plannedRevisitsPerSecond()).toBeCloseTo(planned, 12);
    expect(Math.abs(planned / budget - 1)).toBeLessThan(0.015);
  });

  it("spends the budget its budgetOf gives it, reallocating when that moves (its part of a cluster's)", () => {
    const clock = new ManualClock();
    const budget = 0.1;
    let factor = 1;
    const shared: { pages: number; budget: number }[] = [];
    const policy = new AdaptivePolicy(
      { minMs: MIN_MS, maxMs: MAX_MS, budget },
      clock,
      optimalFrequencies,
      (own) => {
        shared.push(own);
        return own.budget * factor;
      },
    );
    const changing = regularHistory(11, 5, 10_000);
    const plan = (rounds = 2) => {
      let ms = 0;
      for (let i = 0; i < rounds; i++) {
        policy.nextIntervalMs("a", changing);
        policy.nextIntervalMs("b", changing);
        ms = policy.nextIntervalMs("c", changing);
        clock.advance(1000);
      }
      return ms;
    };
    // Three pages alike: a third of the budget each.
    expect(1000 / plan()).toBeCloseTo(budget / 3, 9);
    expect(policy.sharing()).toEqual({ pages: 3, budget });
    expect(shared.at(-1)).toEqual({ pages: 3, budget });
    // The cluster gives it twice its own budget (its pages are more than its share): each page gets
    // two thirds of its own budget once reallocated, and the plans spend it (the boost that makes them
    // catch up with a budget moved settles within a few hundred visits).
    factor = 2;
    expect(Math.abs((3 * 1000) / plan(300) / (2 * budget) - 1)).toBeLessThan(0.015);
    // And half of it when its pages are fewer than its share.
    factor = 0.5;
    expect(Math.abs((3 * 1000) / plan(300) / (budget / 2) - 1)).toBeLessThan(0.015);
    expect(Math.abs(policy.plannedRevisitsPerSecond() / (budget / 2) - 1)).toBeLessThan(0.015);
  });

  it("takes its plans as made at a budget a page moved beyond FOLLOW_BUDGET_BEYOND, by page, so its boost holds instead of chasing the step", () => {
    const clock = new ManualClock();
    const budget = 0.1;
    let factor = 1;
    const policy = new AdaptivePolicy(
      { minMs: MIN_MS, maxMs: MAX_MS, budget },
      clock,
      optimalFrequencies,
      (own) => own.budget * factor,
    );
    const changing = regularHistory(11, 5, 10_000);
    for (let i = 0; i < 300; i++) {
      for (const key of ["a", "b", "c"]) policy.nextIntervalMs(key, changing);
      clock.advance(1000);
    }
    // The plans spend the budget; the first asking only notes the budget a page they were made at.
    expect(policy.followBudget()).toBeUndefined();
    const planned = policy.plannedRevisitsPerSecond();
    expect(Math.abs(planned / budget - 1)).toBeLessThan(0.015);
    // A move within FOLLOW_BUDGET_BEYOND is left to the plans made at each visit.
    factor = 1 + FOLLOW_BUDGET_BEYOND / 2;
    expect(policy.followBudget()).toBeUndefined();
    expect(policy.plannedRevisitsPerSecond()).toBe(planned);
    // Tripled: each page is taken as planned at the new budget (the recrawler brings its due time 3×
    // nearer), and the next plans are made at it with the boost as it was: they spend the new budget
    // from the first, where the boost once rose towards 1.5× and overshot as the plans caught up.
    factor = 3;
    const ratios = policy.followBudget();
    expect([...(ratios?.keys() ?? [])].sort()).toEqual(["a", "b", "c"]);
    for (const ratio of ratios?.values() ?? []) expect(ratio).toBeCloseTo(3, 2);
    expect(Math.abs(policy.plannedRevisitsPerSecond() / (3 * budget) - 1)).toBeLessThan(0.015);
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      let sum = 0;
      for (const key of ["a", "b", "c"]) sum += 1000 / policy.nextIntervalMs(key, changing);
      expect(Math.abs(sum / (3 * budget) - 1)).toBeLessThan(0.015);
    }
    // A page more at the same budget: each page's share falls to three quarters, and its plan with it
    // (an agent handed pages gets more of a cluster's budget, but each page less).
    policy.nextIntervalMs("d", changing);
    const fewer = policy.followBudget();
    for (const key of ["a", "b", "c"]) expect(fewer?.get(key)).toBeCloseTo(0.75, 2);
    // A fixed interval has no budget to follow.
    expect(new FixedPolicy(1000).followBudget()).toBeUndefined();
  });

  it("follows a budget's step by what each page would be given now: a page at --recrawl-max stays there, a hinted page keeps its hint", () => {
    const clock = new ManualClock();
    let factor = 1;
    const policy = new AdaptivePolicy(
      { minMs: MIN_MS, maxMs: MAX_MS, budget: 0.01 },
      clock,
      optimalFrequencies,
      (own) => own.budget * factor,
    );
    // "still" never changes (its visits span the maximum); "hinted" has a sitemap's daily changefreq
    // and too short a history for an estimate; "new" has neither.
    const still = regularHistory(6, 0, MAX_MS / 5);
    const hinted = { ...regularHistory(1, 0, 10_000), changefreq: "hourly" as const };
    const fresh = regularHistory(1, 0, 10_000);
    for (let i = 0; i < 3; i++) {
      policy.nextIntervalMs("still", still);
      policy.nextIntervalMs("hinted", hinted);
      policy.nextIntervalMs("new", fresh);
      clock.advance(1000);
    }
    expect(policy.followBudget()).toBeUndefined();
    factor = 4;
    const ratios = policy.followBudget();
    expect(ratios?.get("still")).toBe(1);
    expect(ratios?.has("hinted")).toBe(false);
    expect(ratios?.get("new")).toBeCloseTo(4, 6);
  });

  it("weighs pages without an estimate by their age at their first visit, within HINT_SPAN×, spending the budget", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 0.5 }, clock);
    const short = regularHistory(1, 0, 0);
    // Two pages: an even share of 0.25 page/s each, every 4 s. One changed 1 s before its first visit
    // (weight 4, the most), the other has no date (weight 1).
    policy.nextIntervalMs("b", short);
    const fresh = policy.nextIntervalMs("a", { ...short, ageAtFirstVisitMs: 1000 });
    const plain = policy.nextIntervalMs("b", short);
    expect(fresh).toBeCloseTo(1000 / ((0.25 * 4 * 2) / 5), 6);
    expect(plain).toBeCloseTo(1000 / ((0.25 * 2) / 5), 6);
    expect(1000 / fresh + 1000 / plain).toBeCloseTo(0.5, 9);
    // One untouched for a day weighs 1 / HINT_SPAN.
    const old = policy.nextIntervalMs("a", { ...short, ageAtFirstVisitMs: 86_400_000 });
    expect(old).toBeCloseTo(1000 / ((0.25 * (1 / HINT_SPAN) * 2) / (1 + 1 / HINT_SPAN)), 6);
    // Once the page's own visits tell (at the next reallocation), the hint is not read.
    clock.advance(1000);
    expect(policy.nextIntervalMs("a", { ...regularHistory(6, 0, MAX_MS / 5), ageAtFirstVisitMs: 1000 })).toBe(
      MAX_MS,
    );
  });

  it("gives a page with a sitemap changefreq the period it says within the bounds until its visits give an estimate, then the estimate's", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 0.5 }, clock);
    const hinted = (visits: number, changes: number, changefreq: "always" | "hourly" | "never" | "daily") =>
      regularHistory(visits, changes, 60_000, { changefreq, ageAtFirstVisitMs: 1000 });
    // The first interval follows the hint, whatever the budget and the lastmod's age would give.
    expect(policy.nextIntervalMs("always", hinted(1, 0, "always"))).toBe(MIN_MS);
    expect(policy.nextIntervalMs("hourly", hinted(1, 0, "hourly"))).toBe(3_600_000);
    expect(policy.nextIntervalMs("daily", hinted(1, 0, "daily"))).toBe(MAX_MS);
    expect(policy.nextIntervalMs("never", hinted(1, 0, "never"))).toBe(MAX_MS);
    // So does the second: one interval tells too little (the estimate needs MIN_INTERVALS_FOR_ESTIMATE).
    expect(policy.nextIntervalMs("always", hinted(2, 0, "always"))).toBe(MIN_MS);
    // A page said to change never and found changed has no hint any more: it shares the budget as
    // pages without one do (its lastmod's age weighs it).
    expect(hintedPeriodMs(hinted(2, 1, "never"))).toBeUndefined();
    expect(policy.nextIntervalMs("never", hinted(2, 1, "never"))).not.toBe(MAX_MS);
    // From its estimate on, the page's visits alone count: found unchanged at every visit, the page
    // said to change always gets no visit from the allocation (looked at again after its visits'
    // span), and one said to change never but found changed at every visit (at 60 s) the interval
    // the optimal allocation gives it.
    clock.advance(1000);
    expect(policy.nextIntervalMs("always", hinted(MIN_INTERVALS_FOR_ESTIMATE + 1, 0, "always"))).toBe(
      ESTIMATE_REACH * MIN_INTERVALS_FOR_ESTIMATE * 60_000,
    );
    const busy = hinted(MIN_INTERVALS_FOR_ESTIMATE + 1, MIN_INTERVALS_FOR_ESTIMATE, "never");
    expect(policy.nextIntervalMs("never", busy)).toBeLessThan(MAX_MS);
    expect(policy.rateOf("never")).toBeCloseTo(estimateChangeRate(2, 2, 60), 12);
  });

  it("takes no hint under --recrawl fixed", () => {
    const policy = revisitPolicy(
      { mode: "fixed", intervalMs: 5000, minMs: MIN_MS, maxMs: MAX_MS, budget: 1 },
      new ManualClock(),
    );
    for (const changefreq of ["always", "never"] as const) {
      expect(policy.nextIntervalMs("a", regularHistory(1, 0, 0, { changefreq }))).toBe(5000);
    }
  });

  it("spends a hinted page's period instead of its even share: the pages without a hint share theirs as before", () => {
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 0.5 }, new ManualClock());
    const short = regularHistory(1, 0, 0);
    policy.nextIntervalMs("hinted", { ...short, changefreq: "always" });
    // Two pages: 0.25 page/s each; the unhinted one's is not moved by the hinted one's minimum.
    expect(policy.nextIntervalMs("plain", short)).toBe(4000);
  });

  it("shares the budget evenly among pages whose history is still short", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 0.5 }, clock);
    const short = regularHistory(MIN_INTERVALS_FOR_ESTIMATE, 1, 60_000);
    expect(policy.nextIntervalMs("a", short)).toBe(2000);
    // Two pages now: each gets half of 0.5 page/s.
    expect(policy.nextIntervalMs("b", short)).toBe(4000);
    expect(Number.isNaN(policy.rateOf("a"))).toBe(true);
  });

  it("shares the budget among the pages it still visits: a page forgotten (its host handed over) takes no share", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 0.5 }, clock);
    const short = regularHistory(MIN_INTERVALS_FOR_ESTIMATE, 1, 60_000);
    for (const key of ["a", "b", "c", "d"]) policy.nextIntervalMs(key, short);
    expect(policy.plannedRevisitsPerSecond()).toBeCloseTo(0.5 + 0.25 + 0.5 / 3 + 0.125, 12);
    policy.forget("c");
    policy.forget("d");
    policy.forget("unknown");
    expect(policy.plannedRevisitsPerSecond()).toBeCloseTo(0.75, 12);
    expect(Number.isNaN(policy.rateOf("c"))).toBe(true);
    // Two pages left: each gets half of 0.5 page/s, not a quarter.
    expect(policy.nextIntervalMs("a", short)).toBe(4000);
  });

  it("takes in pages planned elsewhere: they share the budget at once, their plans among the revisits planned", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget: 0.5 }, clock);
    const short = regularHistory(MIN_INTERVALS_FOR_ESTIMATE, 1, 60_000);
    // Three pages handed over, each planned 10 s after its last visit.
    for (const key of ["h1", "h2", "h3"]) {
      policy.note(key, { ...short, nextAtMs: short.lastAtMs + 10_000 });
    }
    expect(policy.plannedRevisitsPerSecond()).toBeCloseTo(0.3, 12);
    // A fourth page visited here gets a quarter of the budget, not all of it.
    expect(policy.nextIntervalMs("own", short)).toBe(8000);
  });

  it("gives a page that changes too often for the budget no visit but its reach's, the others the optimal ones of the rest", () => {
    const clock = new ManualClock();
    const budget = 0.02;
    const policy = new AdaptivePolicy({ minMs: MIN_MS, maxMs: MAX_MS, budget }, clock);
    const slow = regularHistory(11, 1, 60_000);
    const medium = regularHistory(11, 4, 60_000);
    const hectic = regularHistory(21, 20, 1000);
    for (const key of ["s1", "s2", "m1", "m2"])
      policy.nextIntervalMs(key, key.startsWith("s") ? slow : medium);
    policy.nextIntervalMs("hectic", hectic);
    // The allocation is made again at most once a second.
    clock.advance(1000);
    const rates = [
      estimateChangeRate(10, 1, 60),
      estimateChangeRate(10, 1, 60),
      estimateChangeRate(10, 4, 60),
      estimateChangeRate(10, 4, 60),
      estimateChangeRate(20, 20, 1),
    ];
    expect(optimalFrequencies(rates, budget)[4]).toBe(0);
    // Its visits span 20 s: it is looked at again after its even share's interval (5 pages, 250 s),
    // which comes off the others' part.
    const evenShareMs = 1000 / (budget / 5);
    expect(policy.nextIntervalMs("hectic", hectic)).toBe(evenShareMs);
    for (let i = 0; i < 3; i++) {
      for (const key of ["s1", "s2", "m1", "m2"])
        policy.nextIntervalMs(key, key.startsWith("s") ? slow : medium);
      policy.nextIntervalMs("hectic", hectic);
      clock.advance(1000);
    }
    const frequencies = optimalFrequencies(rates, budget - 1000 / evenShareMs);
    const slowMs = policy.nextIntervalMs("s1", slow);
    const mediumMs = policy.nextIntervalMs("m1", medium);
    expect(slowMs).toBeCloseTo(1000 / (frequencies[0] as number), 3);
    expect(mediumMs).toBeCloseTo(1000 / (frequencies[2] as number), 3);
    // Within these rates the faster page gets the shorter interval.
    expect(mediumMs).toBeLessThan(slowMs);
  });

  it("keeps every interval within the bounds", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: 5000, maxMs: 60_000, budget: 100 }, clock);
    for (let i = 0; i < 20; i++) {
      clock.advance(1000);
      const ms = policy.nextIntervalMs(`p${i}`, regularHistory(10, i % 10, 10_000));
      expect(ms).toBeGreaterThanOrEqual(5000);
      expect(ms).toBeLessThanOrEqual(60_000);
    }
  });
});

describe("validateRecrawlOptions", () => {
  const options = { mode: "adaptive", intervalMs: 1000, minMs: 1000, maxMs: 5000, budget: 1 } as const;

  it("accepts sound options and refuses bounds the wrong way round, no budget, an empty interval or horizon", () => {
    expect(() => validateRecrawlOptions(options)).not.toThrow();
    expect(() => validateRecrawlOptions({ ...options, maxMs: 500 })).toThrow(/--recrawl-max/);
    expect(() => validateRecrawlOptions({ ...options, budget: 0 })).toThrow(/--recrawl-budget/);
    expect(() => validateRecrawlOptions({ ...options, budget: 1_000_000 })).not.toThrow();
    expect(() => validateRecrawlOptions({ ...options, budget: 1_000_001 })).toThrow(
      "--recrawl-budget must be at most 1000000 pages a second",
    );
    expect(() => validateRecrawlOptions({ ...options, intervalMs: 0 })).toThrow(/--recrawl-interval/);
    expect(() => validateRecrawlOptions({ ...options, horizonMs: 0 })).toThrow(/--recrawl-horizon/);
  });
});

describe("revisitPolicy", () => {
  it("gives --recrawl proportional intervals from the proportional allocation of the estimated rates", () => {
    const options = { mode: "proportional", intervalMs: 1000, minMs: 1, maxMs: MAX_MS, budget: 1 } as const;
    const clock = new ManualClock();
    const policy = revisitPolicy(options, clock);
    const slow = regularHistory(6, 1, 60_000);
    const fast = regularHistory(6, 4, 60_000);
    policy.nextIntervalMs("slow", slow);
    policy.nextIntervalMs("fast", fast);
    // Both rates count from the next reallocation, a second later.
    clock.advance(1000);
    const [slowFrequency, fastFrequency] = proportionalFrequencies(
      [slow, fast].map((h) => estimateChangeRate(5, h.changes, 60)),
      1,
    ) as [number, number];
    expect(policy.nextIntervalMs("slow", slow)).toBeCloseTo(1000 / slowFrequency, 6);
    expect(policy.nextIntervalMs("fast", fast)).toBeCloseTo(1000 / fastFrequency, 6);
    expect(fastFrequency).toBeGreaterThan(slowFrequency);
  });
});
