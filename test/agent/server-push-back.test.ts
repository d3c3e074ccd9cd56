import { describe, expect, it } from "vitest";
import {
  backOff,
  CAREFUL_STEP_PER_S,
  easeOff,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  MIN_BACKOFF_MS,
  PUSH_BACK_STATUSES,
  RATE_STEP_PER_S,
  retryAfterMs,
} from "../../src/agent/server-push-back.js";

const NOW = Date.parse("2026-11-27T08:00:00Z");

describe("Retry-After", () => {
  it("reads delay-seconds and HTTP dates, capped at an hour, a past date as now", () => {
    expect(retryAfterMs("1", NOW)).toBe(1000);
    expect(retryAfterMs(" 120 ", NOW)).toBe(120_000);
    expect(retryAfterMs("0", NOW)).toBe(0);
    expect(retryAfterMs("86400", NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterMs("Fri, 27 Nov 2026 08:00:30 GMT", NOW)).toBe(30_000);
    expect(retryAfterMs("Fri, 27 Nov 2026 07:00:00 GMT", NOW)).toBe(0);
    expect(retryAfterMs("Sat, 28 Nov 2026 08:00:00 GMT", NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  it("ignores what is absent or unreadable, an ISO date too (not an HTTP-date)", () => {
    for (const value of [undefined, "", "soon", "-5", "1.5", "Fri, 99 Foo 2026", "2026-11-27T08:00:30Z"]) {
      expect(retryAfterMs(value, NOW), String(value)).toBeUndefined();
    }
  });
});

describe("PUSH_BACK_STATUSES", () => {
  it("are 429 and 503, the statuses that ask a client to slow down and come back", () => {
    expect([...PUSH_BACK_STATUSES].sort()).toEqual([429, 503]);
  });
});

describe("AIMD back-off", () => {
  it("halves the rate at each refusal (from at least the host's delay, within bounds), raises it a step a success", () => {
    expect(backOff(0, 0)).toBe(MIN_BACKOFF_MS);
    expect(backOff(MIN_BACKOFF_MS, 0)).toBe(2 * MIN_BACKOFF_MS);
    expect(backOff(0, 1000)).toBe(2000);
    expect(backOff(MAX_BACKOFF_MS, 0)).toBe(MAX_BACKOFF_MS);
    // 1 request/s, then 1.25/s.
    expect(easeOff(1000)).toBeCloseTo(1000 / (1 + RATE_STEP_PER_S), 6);
    // From the longest delay back to none in a few hundred answers, not thousands.
    let delay = MAX_BACKOFF_MS;
    let answers = 0;
    while (delay > 0) {
      delay = easeOff(delay);
      answers++;
    }
    expect(answers).toBeGreaterThan(100);
    expect(answers).toBeLessThan(500);
    expect(easeOff(0)).toBe(0);
  });

  it("grows by a careful step once near the rate the server last refused, and probes past it slowly", () => {
    // Refused at 5 requests/s (200 ms): from 2.5/s the rate climbs fast to 90% of that, then slowly.
    expect(1000 / easeOff(400, 200)).toBeCloseTo(2.5 + RATE_STEP_PER_S, 6);
    expect(1000 / easeOff(1000 / 4.4, 200)).toBeCloseTo(4.4 + CAREFUL_STEP_PER_S, 6);
    expect(1000 / easeOff(200, 200)).toBeCloseTo(5 + CAREFUL_STEP_PER_S, 6);
    // Never back to no delay at all while a refused rate is known.
    let delay = 50;
    for (let i = 0; i < 1000; i++) delay = easeOff(delay, 200);
    expect(delay).toBeGreaterThan(0);
    // Answers between two refusals at a 5/s limit: over half as many again as with the plain step.
    const answersUntil = (refusedAtMs: number) => {
      let d = backOff(200, 0);
      let n = 0;
      while (1000 / d <= 5) {
        d = easeOff(d, refusedAtMs);
        n++;
      }
      return n;
    };
    expect(answersUntil(200)).toBeGreaterThan(1.5 * answersUntil(0));
  });

  it("switches to the careful step only past 90% of the refused rate, and drops only delays below 10 ms", () => {
    // Refused at 5 requests/s: from 4.25/s the plain step reaches exactly 4.5/s, 90% of it.
    expect(1000 / easeOff(1000 / 4.25, 200)).toBeCloseTo(4.5, 6);
    // No refusal known: 99.75/s eases to exactly 100/s (10 ms), kept; 199.75/s to 5 ms, dropped.
    expect(easeOff(1000 / 99.75)).toBe(10);
    expect(easeOff(1000 / 199.75)).toBe(0);
    // A refusal known: however short the delay, it is kept.
    expect(easeOff(8, 5)).toBeCloseTo(1000 / (125 + RATE_STEP_PER_S), 6);
  });

  it("takes a delay, or a refused delay, of zero or less as none", () => {
    expect(easeOff(0, 200)).toBe(0);
    expect(easeOff(-1, 200)).toBe(0);
    expect(easeOff(1000, -200)).toBe(easeOff(1000));
  });
});
