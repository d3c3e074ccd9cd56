import { describe, expect, it } from "vitest";
import { HostPace, PARK_LONGER_WAITS_MS } from "../../src/agent/host-pace.js";
import { MIN_BACKOFF_MS } from "../../src/agent/server-push-back.js";

/** One host's pace: the longest delay wins and names the wait; long waits park the host. */

const NOW = 1_000_000;
const OWN = { delayMs: 500, delayFactor: 0, crawlDelayMs: undefined };

describe("HostPace", () => {
  it("waits this agent's delay after a request, counted from its end", () => {
    const pace = new HostPace();
    expect([pace.nextFetchAtMs, pace.pacedBy]).toEqual([0, "polite"]);
    pace.afterRequest(NOW, 40, OWN);
    expect(pace.nextFetchAtMs).toBe(NOW + 500);
    expect(pace.pacedBy).toBe("polite");
  });

  it("waits the delay factor times a slow request when that is longer", () => {
    const pace = new HostPace();
    pace.afterRequest(NOW, 300, { ...OWN, delayFactor: 4 });
    expect(pace.nextFetchAtMs).toBe(NOW + 1200);
    expect(pace.pacedBy).toBe("polite");
  });

  it("waits a longer Crawl-delay whatever its length, and says so", () => {
    const pace = new HostPace();
    pace.afterRequest(NOW, 10, { ...OWN, crawlDelayMs: 600_000 });
    expect(pace.nextFetchAtMs).toBe(NOW + 600_000);
    expect(pace.pacedBy).toBe("crawl-delay");
    expect(pace.longWait(NOW)).toEqual({ untilMs: NOW + 600_000, reason: "crawl-delay" });
  });

  it("names this agent's own delay when the site's Crawl-delay is no longer", () => {
    const pace = new HostPace();
    pace.afterRequest(NOW, 0, { ...OWN, crawlDelayMs: OWN.delayMs });
    expect(pace.pacedBy).toBe("polite");
  });

  it("takes a new reason for a wait that ends just when the one set did", () => {
    const pace = new HostPace();
    pace.pushedBack(NOW, 0, "10");
    pace.afterRequest(NOW, 0, { ...OWN, crawlDelayMs: 10_000 });
    expect([pace.nextFetchAtMs, pace.pacedBy]).toEqual([NOW + 10_000, "crawl-delay"]);
  });

  it("parks a host only for waits longer than the threshold", () => {
    const pace = new HostPace();
    pace.afterRequest(NOW, 0, { ...OWN, delayMs: PARK_LONGER_WAITS_MS });
    expect(pace.longWait(NOW)).toBeUndefined();
    pace.afterRequest(NOW, 0, { ...OWN, delayMs: PARK_LONGER_WAITS_MS + 1 });
    expect(pace.longWait(NOW)).toEqual({ untilMs: NOW + PARK_LONGER_WAITS_MS + 1, reason: "polite" });
    expect(pace.longWait(NOW + 1)).toBeUndefined();
  });

  it("holds the host for a Retry-After, which a shorter delay afterwards does not cut", () => {
    const pace = new HostPace();
    expect(pace.pushedBack(NOW, 0, "30")).toBe(NOW + 30_000);
    expect(pace.pacedBy).toBe("throttled");
    pace.afterRequest(NOW + 10, 5, OWN);
    expect(pace.nextFetchAtMs).toBe(NOW + 30_000);
    expect(pace.pacedBy).toBe("throttled");
  });

  it("backs off at each refusal and eases off at each answer", () => {
    const pace = new HostPace();
    pace.pushedBack(NOW, 0, undefined);
    expect(pace.nextFetchAtMs).toBe(NOW + MIN_BACKOFF_MS);
    pace.pushedBack(NOW, 0, undefined);
    expect(pace.nextFetchAtMs).toBe(NOW + 2 * MIN_BACKOFF_MS);
    // The back-off now outweighs a zero delay, and is named as the reason.
    pace.afterRequest(NOW + 1000, 0, { ...OWN, delayMs: 0 });
    expect(pace.nextFetchAtMs).toBe(NOW + 1000 + 2 * MIN_BACKOFF_MS);
    expect(pace.pacedBy).toBe("throttled");
    for (let i = 0; i < 100; i++) pace.answered();
    pace.afterRequest(NOW + 2000, 0, { ...OWN, delayMs: 0 });
    expect(pace.nextFetchAtMs).toBeLessThan(NOW + 2000 + MIN_BACKOFF_MS);
  });

  it("never eases back to no delay once a server refused a known rate", () => {
    const pace = new HostPace();
    // Refused at full speed (rate unknown), then again at 4 requests/s (250 ms).
    pace.pushedBack(NOW, 0, undefined);
    pace.pushedBack(NOW, 0, undefined);
    for (let i = 0; i < 1000; i++) pace.answered();
    pace.afterRequest(NOW + 1000, 0, { ...OWN, delayMs: 0 });
    expect(pace.nextFetchAtMs).toBeGreaterThan(NOW + 1000);
    expect(pace.pacedBy).toBe("throttled");
  });
});
