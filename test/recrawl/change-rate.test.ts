import { describe, expect, it } from "vitest";
import { Mt19937 } from "../../src/hashing/mt19937.js";
import {
  averageFreshness,
  estimateChangeRate,
  estimateChangeRateFromLastModified,
  expectedFreshness,
  marginalFreshness,
  optimalFrequencies,
  proportionalFrequencies,
} from "../../src/recrawl/index.js";

/** Uniform draws in [0, 1) from a seeded Mersenne Twister, so the simulation is the same every run. */
function uniform(seed: number): () => number {
  const twister = new Mt19937(Uint32Array.of(seed));
  return () => twister.next() / 2 ** 32;
}

/** Of `n` visits `intervalSeconds` apart to a page changing as a Poisson process of `rate`, how many found it changed. */
function simulatedChanges(rate: number, n: number, intervalSeconds: number, random: () => number): number {
  let changed = 0;
  // A visit sees a change when at least one happened in its interval: probability 1 − e^(−λI).
  for (let i = 0; i < n; i++) if (random() < -Math.expm1(-rate * intervalSeconds)) changed++;
  return changed;
}

describe("Cho and Garcia-Molina's change-rate estimator", () => {
  it("is −ln((n − X + 0.5)/(n + 0.5)) / I", () => {
    expect(estimateChangeRate(10, 5, 2)).toBeCloseTo(Math.log(10.5 / 5.5) / 2, 12);
    expect(estimateChangeRate(4, 1, 60)).toBeCloseTo(-Math.log(3.5 / 4.5) / 60, 12);
  });

  it("is 0 when no visit found a change, and finite (ln(2n + 1) / I) when every one did", () => {
    expect(estimateChangeRate(20, 0, 1)).toBe(0);
    expect(estimateChangeRate(20, 20, 3)).toBeCloseTo(Math.log(41) / 3, 12);
  });

  it("refuses impossible counts", () => {
    expect(estimateChangeRate(3, 4, 1)).toBeNaN();
    expect(estimateChangeRate(3, 1, 0)).toBeNaN();
  });

  it("converges to the true rate where the naive X/(nI) stays low", () => {
    const random = uniform(33);
    for (const rate of [0.1, 0.5, 1.5]) {
      const n = 20_000;
      const changes = simulatedChanges(rate, n, 1, random);
      const error = Math.abs(estimateChangeRate(n, changes, 1) - rate) / rate;
      expect(error).toBeLessThan(0.05);
      // The naive estimate misses changes within one interval: it is biased low, the more so the
      // more often the page changes.
      expect(Math.abs(changes / n - rate) / rate).toBeGreaterThan(error);
    }
    for (const rate of [0.5, 1.5]) {
      expect(simulatedChanges(rate, 20_000, 1, random) / 20_000).toBeLessThan(rate * 0.85);
    }
  });
});

/**
 * `n` intervals of `intervalSeconds` of a page changing as a Poisson process of `rate`, each looked at
 * with the page's last-modified date: the intervals that saw a change and the time known unchanged
 * (the whole interval, or from the last change in it to its end).
 */
function simulatedLastModified(rate: number, n: number, intervalSeconds: number, random: () => number) {
  let changes = 0;
  let exposureSeconds = 0;
  for (let i = 0; i < n; i++) {
    let last: number | undefined;
    for (
      let at = -Math.log(1 - random()) / rate;
      at <= intervalSeconds;
      at += -Math.log(1 - random()) / rate
    ) {
      last = at;
    }
    if (last === undefined) exposureSeconds += intervalSeconds;
    else {
      changes++;
      exposureSeconds += intervalSeconds - last;
    }
  }
  return { changes, exposureSeconds };
}

describe("Cho and Garcia-Molina's estimator with last-modified dates", () => {
  it("is ((X − 1) − X / (n·ln(1 − X/n))) / T", () => {
    expect(estimateChangeRateFromLastModified(10, 5, 4)).toBeCloseTo((4 - 5 / (10 * Math.log(0.5))) / 4, 12);
  });

  it("is 0 when no interval saw a change, (n − 1) / T when every one did, NaN for impossible counts", () => {
    expect(estimateChangeRateFromLastModified(8, 0, 30)).toBe(0);
    expect(estimateChangeRateFromLastModified(8, 8, 2)).toBeCloseTo(7 / 2, 12);
    expect(estimateChangeRateFromLastModified(3, 4, 1)).toBeNaN();
    expect(estimateChangeRateFromLastModified(3, 1, 0)).toBeNaN();
    expect(estimateChangeRateFromLastModified(0, 0, 1)).toBeNaN();
  });

  it("converges to the true rate, even for pages that change several times an interval", () => {
    const random = uniform(7);
    for (const rate of [0.1, 0.5, 1.5, 4]) {
      const { changes, exposureSeconds } = simulatedLastModified(rate, 20_000, 1, random);
      expect(
        Math.abs(estimateChangeRateFromLastModified(20_000, changes, exposureSeconds) - rate) / rate,
      ).toBeLessThan(0.03);
    }
  });

  it("is nearly unbiased on short histories, also for pages that change more often than the visits (where the estimator without dates cannot tell)", () => {
    const random = uniform(11);
    const histories = 4_000;
    for (const rate of [0.3, 1, 5]) {
      let withDates = 0;
      let without = 0;
      for (let h = 0; h < histories; h++) {
        const { changes, exposureSeconds } = simulatedLastModified(rate, 10, 1, random);
        withDates += estimateChangeRateFromLastModified(10, changes, exposureSeconds);
        without += estimateChangeRate(10, changes, 1);
      }
      expect(Math.abs(withDates / histories - rate) / rate).toBeLessThan(0.05);
      // Ten visits that all saw a change say at most ln(21) ≈ 3 changes an interval.
      if (rate > 3) expect(without / histories).toBeLessThan(Math.log(21) + 1e-9);
    }
  });
});

describe("freshness and its optimal allocation", () => {
  it("expects freshness (f/λ)(1 − e^(−λ/f)) of a page visited regularly", () => {
    expect(expectedFreshness(1, 1)).toBeCloseTo(1 - Math.exp(-1), 12);
    expect(expectedFreshness(2, 1)).toBeCloseTo((1 - Math.exp(-2)) / 2, 12);
    expect(expectedFreshness(0, 0)).toBe(1);
    expect(expectedFreshness(1, 0)).toBe(0);
  });

  it("spends the whole budget with one marginal gain on every page it visits", () => {
    const rates = [0.05, 0.2, 0.5, 1, 2];
    const budget = 2;
    const frequencies = optimalFrequencies(rates, budget);
    expect(frequencies.reduce((sum, f) => sum + f, 0)).toBeCloseTo(budget, 6);
    const visited = rates
      .map((rate, i) => [rate, frequencies[i] as number] as const)
      .filter(([, f]) => f > 0);
    expect(visited.length).toBeGreaterThan(1);
    const [first] = visited;
    const mu = marginalFreshness(first?.[0] as number, first?.[1] as number);
    for (const [rate, f] of visited) expect(marginalFreshness(rate, f)).toBeCloseTo(mu, 6);
    // A page left out gains less from its first visit (1/λ) than the visited ones from their last.
    for (const [i, rate] of rates.entries())
      if (frequencies[i] === 0) expect(1 / rate).toBeLessThanOrEqual(mu);
  });

  it("gives pages changing too often for the budget no visits, and pages that never change none", () => {
    const frequencies = optimalFrequencies([0, 0.01, 0.02, 50], 0.05);
    expect(frequencies[0]).toBe(0);
    expect(frequencies[3]).toBe(0);
    expect(frequencies[1]).toBeGreaterThan(0);
    // Up to a point a faster page gets more visits; past it, fewer (here none).
    expect(frequencies[2]).toBeGreaterThan(frequencies[1] as number);
  });

  it("beats uniform, which beats proportional (Cho and Garcia-Molina's claims)", () => {
    const random = uniform(7);
    const rates = Array.from({ length: 200 }, () => -Math.log(1 - random()) * 0.5);
    const budget = 50;
    const uniformShare = rates.map(() => budget / rates.length);
    const total = rates.reduce((sum, rate) => sum + rate, 0);
    const proportional = rates.map((rate) => (budget * rate) / total);
    const optimal = averageFreshness(rates, optimalFrequencies(rates, budget));
    const even = averageFreshness(rates, uniformShare);
    expect(optimal).toBeGreaterThan(even);
    expect(even).toBeGreaterThan(averageFreshness(rates, proportional));
  });
});

describe("the proportional allocation", () => {
  it("shares the budget in proportion to the rates, none to pages that never change", () => {
    expect(proportionalFrequencies([1, 3, 0], 2)).toEqual([0.5, 1.5, 0]);
    expect(proportionalFrequencies([0, 0], 2)).toEqual([0, 0]);
  });

  it("keeps pages less fresh than the uniform allocation, itself less fresh than the optimal one (Cho and Garcia-Molina)", () => {
    // Rates spread over two orders of magnitude, a budget of one visit per page per mean interval.
    const rates = Array.from({ length: 50 }, (_, i) => 0.1 * 10 ** (i / 25));
    const budget = rates.length * 0.5;
    const uniform = averageFreshness(
      rates,
      rates.map(() => budget / rates.length),
    );
    const proportional = averageFreshness(rates, proportionalFrequencies(rates, budget));
    const optimal = averageFreshness(rates, optimalFrequencies(rates, budget));
    expect(proportional).toBeLessThan(uniform);
    expect(uniform).toBeLessThan(optimal);
  });
});
