import { describe, expect, it } from "vitest";
import {
  AdaptivePolicy,
  estimatedRate,
  fitRatePrior,
  MAX_PRIOR_CHANGES,
  MIN_PAGES_FOR_PRIOR,
  posteriorRate,
  type RateEvidence,
} from "../../src/recrawl/index.js";
import { createRandom } from "../../src/testweb/prng.js";
import { ManualClock } from "../support/manual-clock.js";
import { regularHistory } from "../support/page-histories.js";

/** Exponential draws of `random`, mean 1. */
function exponential(random: () => number): number {
  return -Math.log(1 - random());
}

/** Changes of a Poisson page of `rate` over `exposureS`: exponential gaps counted. */
function poissonCount(random: () => number, rate: number, exposureS: number): number {
  let count = 0;
  for (let t = exponential(random) / rate; t <= exposureS; t += exponential(random) / rate) count++;
  return count;
}

/** `pages` pages whose rates follow Gamma(shape 2, 20 s) (a mean of 0.1 a second), each seen for `exposureS`. */
function gammaPages(pages: number, exposureS: number, seed = 1): { rate: number; evidence: RateEvidence }[] {
  const random = createRandom(seed);
  return Array.from({ length: pages }, () => {
    const rate = (exponential(random) + exponential(random)) / 20;
    return { rate, evidence: { changes: poissonCount(random, rate, exposureS), exposureS } };
  });
}

/**
 * `pages` pages whose rates follow Gamma(shape 2, 20 s), visited every 10 s for `intervals` intervals,
 * their evidence as Last-Modified dates give it: an interval with a change counts one, and the page is
 * known unchanged from its last change to the visit; one without, the whole interval.
 */
function datedPages(pages: number, intervals: number, seed = 3): { rate: number; evidence: RateEvidence }[] {
  const random = createRandom(seed);
  return Array.from({ length: pages }, () => {
    const rate = (exponential(random) + exponential(random)) / 20;
    let changes = 0;
    let exposureS = 0;
    let at = exponential(random) / rate;
    for (let visit = 10; visit <= intervals * 10; visit += 10) {
      let last: number | undefined;
      for (; at <= visit; at += exponential(random) / rate) last = at;
      if (last !== undefined && last > visit - 10) {
        changes++;
        exposureS += visit - last;
      } else exposureS += 10;
    }
    return { rate, evidence: { changes, exposureS } };
  });
}

describe("fitRatePrior", () => {
  it("finds the Gamma distribution the pages' rates were drawn from, their noise taken out", () => {
    const prior = fitRatePrior(gammaPages(4000, 50).map((page) => page.evidence));
    expect(prior?.shape).toBeGreaterThan(1.7);
    expect(prior?.shape).toBeLessThan(2.3);
    expect((prior?.shape ?? 0) / (prior?.rateS ?? 1)).toBeCloseTo(0.1, 2);
  });

  it("finds it from Last-Modified evidence of young pages too, whose changes ÷ exposure run high", () => {
    for (const intervals of [2, 3, 10]) {
      const prior = fitRatePrior(datedPages(4000, intervals).map((page) => page.evidence));
      const mean = (prior?.shape ?? 0) / (prior?.rateS ?? 1);
      expect(mean, `${intervals} intervals`).toBeGreaterThan(0.085);
      expect(mean, `${intervals} intervals`).toBeLessThan(0.115);
      expect(prior?.shape, `${intervals} intervals`).toBeGreaterThan(1.4);
    }
  });

  it("finds the share of pages that never change, and gives one long quiet next to nothing", () => {
    const changing = datedPages(1200, 10).map((page) => page.evidence);
    const still = Array.from({ length: 800 }, () => ({ changes: 0, exposureS: 100 }));
    const prior = fitRatePrior([...changing, ...still]);
    expect(prior?.still).toBeGreaterThan(0.3);
    expect(prior?.still).toBeLessThan(0.5);
    if (prior === undefined) throw new Error("no prior");
    // Quiet for 100 s among pages changing every 10 s on average: most likely a still page; quiet for
    // 1,000 s, all but surely one.
    expect(posteriorRate(prior, { changes: 0, exposureS: 100 })).toBeLessThan(1e-3);
    expect(posteriorRate(prior, { changes: 0, exposureS: 1000 })).toBe(0);
    // Seen changing, it is not.
    expect(posteriorRate(prior, { changes: 1, exposureS: 100 })).toBeGreaterThan(5e-3);
  });

  it("fits none from too few pages, or pages never seen changing", () => {
    const few = gammaPages(MIN_PAGES_FOR_PRIOR - 1, 50).map((page) => page.evidence);
    expect(fitRatePrior(few)).toBeUndefined();
    expect(fitRatePrior(Array(100).fill({ changes: 0, exposureS: 60 }))).toBeUndefined();
  });

  it("weighs no more than MAX_PRIOR_CHANGES where the pages look alike", () => {
    const prior = fitRatePrior(Array(100).fill({ changes: 6, exposureS: 60 }));
    expect(prior?.shape).toBe(MAX_PRIOR_CHANGES);
    expect(prior?.rateS).toBeCloseTo(MAX_PRIOR_CHANGES / 0.1, 6);
  });
});

describe("posteriorRate", () => {
  it("is nearer the true rates than each page's own estimate while the pages are seen briefly", () => {
    const pages = gammaPages(2000, 20, 7);
    const prior = fitRatePrior(pages.map((page) => page.evidence));
    if (prior === undefined) throw new Error("no prior");
    const squared = (estimate: (evidence: RateEvidence) => number) =>
      pages.reduce((sum, page) => sum + (estimate(page.evidence) - page.rate) ** 2, 0);
    const own = squared((evidence) => evidence.changes / evidence.exposureS);
    const shrunk = squared((evidence) => posteriorRate(prior, evidence));
    expect(shrunk).toBeLessThan(0.6 * own);
  });

  it("comes to the page's own estimate as its evidence grows", () => {
    const prior = { shape: 1, rateS: 10, still: 0 };
    expect(posteriorRate(prior, { changes: 0, exposureS: 0 })).toBeCloseTo(0.1, 12);
    expect(posteriorRate(prior, { changes: 10_000, exposureS: 10_000 })).toBeCloseTo(1, 2);
    expect(posteriorRate(prior, { changes: 0, exposureS: 100_000 })).toBeLessThan(1e-4);
  });
});

describe("AdaptivePolicy's rates", () => {
  it("are shrunk towards the other pages' where the Last-Modified dates are evidence, not where only visits are", () => {
    const clock = new ManualClock();
    const policy = new AdaptivePolicy({ minMs: 1000, maxMs: 3_600_000, budget: 1 }, clock);
    const dated = (changes: number, exposureMs: number) => ({
      ...regularHistory(6, changes, 60_000),
      lastModifiedRecord: { intervals: 5, changes, exposureMs, trusted: true },
    });
    // 40 pages changing about once a minute; one seen changing once, 5 s before a visit, and known
    // unchanged for no longer; one known by its visits only.
    for (let i = 0; i < 40; i++) policy.nextIntervalMs(`page${i}`, dated(4 + (i % 3), 300_000));
    policy.nextIntervalMs("lucky", dated(1, 5_000));
    policy.nextIntervalMs("undated", regularHistory(6, 5, 60_000));
    clock.advance(1000);
    policy.nextIntervalMs("page0", dated(4, 300_000));
    // Its own estimate: 0.18 a second.
    const lucky = policy.rateOf("lucky");
    expect(lucky).toBeLessThan(0.05);
    expect(lucky).toBeGreaterThan(5 / 300);
    expect(policy.rateOf("undated")).toBe(estimatedRate(regularHistory(6, 5, 60_000)));
    // A page like the others keeps about its own rate (5 changes in 300 s).
    policy.nextIntervalMs("like", dated(5, 300_000));
    clock.advance(1000);
    policy.nextIntervalMs("page0", dated(4, 300_000));
    expect(policy.rateOf("like") / (5 / 300)).toBeGreaterThan(0.85);
    expect(policy.rateOf("like") / (5 / 300)).toBeLessThan(1.15);
  });
});
