import { describe, expect, it } from "vitest";
import { Mt19937 } from "../../src/hashing/mt19937.js";
import { averageFreshness, freshnessOverTime } from "../../src/lab/freshness.js";
import { expectedFreshness } from "../../src/recrawl/index.js";

describe("freshness and age against the ground truth", () => {
  it("counts a copy fresh from its fetch to the page's next change, and its age from that change", () => {
    // Fetched at 0 and 60; changed at 40 and 90; window [0, 100).
    const page = { fetches: [0, 60], changes: [40, 90] };
    const { freshness, ageMs } = averageFreshness([page], 0, 100);
    // Fresh 0–40 and 60–90: 70 of 100.
    expect(freshness).toBeCloseTo(0.7, 12);
    // Stale 40–60 (age 0→20: 200) and 90–100 (0→10: 50): 250 over 100.
    expect(ageMs).toBeCloseTo(2.5, 12);
  });

  it("takes a page not fetched yet for stale since the window's start, and clips to the window", () => {
    const page = { fetches: [30], changes: [] };
    expect(averageFreshness([page], 0, 60)).toEqual({ freshness: 0.5, ageMs: (30 * 30) / 2 / 60 });
    // From 40 on the copy of 30 is fresh for good.
    expect(averageFreshness([page], 40, 60)).toEqual({ freshness: 1, ageMs: 0 });
    // A change before the window: stale, aged from the change.
    const stale = { fetches: [0], changes: [10] };
    expect(averageFreshness([stale], 20, 30)).toEqual({ freshness: 0, ageMs: (20 ** 2 - 10 ** 2) / 2 / 10 });
    expect(averageFreshness([], 0, 10)).toEqual({ freshness: 1, ageMs: 0 });
  });

  it("averages pages, and windows for a plot", () => {
    const fresh = { fetches: [0], changes: [] };
    const staleHalf = { fetches: [0], changes: [50] };
    expect(averageFreshness([fresh, staleHalf], 0, 100).freshness).toBeCloseTo(0.75, 12);
    const series = freshnessOverTime([staleHalf], 0, 100, 2);
    expect(series.map((s) => [s.atMs, s.freshness])).toEqual([
      [0, 1],
      [50, 0],
    ]);
  });

  it("matches Cho and Garcia-Molina's expected freshness and age of a Poisson page visited regularly", () => {
    const twister = new Mt19937(Uint32Array.of(42));
    const random = () => twister.next() / 2 ** 32;
    const rate = 0.8; // changes a second
    const interval = 1000; // ms between visits
    const horizon = 20_000_000;
    const changes: number[] = [];
    for (let t = -Math.log(1 - random()) / rate; t * 1000 < horizon; t += -Math.log(1 - random()) / rate) {
      changes.push(t * 1000);
    }
    const fetches = Array.from({ length: horizon / interval }, (_, i) => i * interval);
    const { freshness, ageMs } = averageFreshness([{ fetches, changes }], 0, horizon);
    expect(freshness).toBeCloseTo(expectedFreshness(rate, 1000 / interval), 2);
    // E[age] = I/2 − 1/λ + (1 − e^(−λI)) / (λ²I), in seconds.
    const r = rate;
    const i = interval / 1000;
    const expectedAgeSeconds = i / 2 - 1 / r + -Math.expm1(-r * i) / (r * r * i);
    expect(ageMs / 1000).toBeCloseTo(expectedAgeSeconds, 2);
  });
});
