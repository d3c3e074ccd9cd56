import { describe, expect, it } from "vitest";
import { estimatedRate, type PageHistory } from "../../src/recrawl/index.js";
import { ShareFreshness } from "../../src/recrawl/share-freshness.js";
import { regularHistory } from "../support/page-histories.js";

/**
 * The estimated freshness of an agent's share, page by page against Cho and Garcia-Molina's e^(−λt),
 * and over a bounded sample of many pages.
 */

/** A page visited 5 times 10 s apart, found changed twice, last at 0, unless `over` says otherwise. */
function history(over: Partial<PageHistory> = {}): PageHistory {
  const { visits = 5, changes = 2, ...rest } = over;
  return regularHistory(visits, changes, 10_000, rest);
}

/** A 64-bit fingerprint from a counter, spread over the whole range (splitmix64). */
function fingerprintOf(i: number): bigint {
  let z = (BigInt(i) * 0x9e3779b97f4a7c15n) & 0xffff_ffff_ffff_ffffn;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffff_ffff_ffff_ffffn;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffff_ffff_ffff_ffffn;
  return z ^ (z >> 31n);
}

describe("ShareFreshness", () => {
  it("expects a page fresh with probability e^(−λt) for its estimated rate λ and the time t since its visit", () => {
    const share = new ShareFreshness();
    const page = history({ lastAtMs: 1_000 });
    share.note("a.test", 1n, page);
    const rate = estimatedRate(page);
    expect(rate).toBeGreaterThan(0);
    expect(share.estimate(1_000)).toEqual({ freshness: 1, pages: 1 });
    const later = share.estimate(1_000 + 1000 / rate);
    expect(later?.freshness).toBeCloseTo(Math.exp(-1), 12);
    // A page found unchanged at every visit is fresh for good.
    share.note("a.test", 2n, history({ changes: 0 }));
    expect(share.estimate(1e12)?.freshness).toBeCloseTo(0.5, 6);
  });

  it("uses the age at a page's first visit as its rate until its visits tell, and leaves out a page with neither", () => {
    const share = new ShareFreshness();
    share.note("a.test", 1n, history({ visits: 1, changes: 0, ageAtFirstVisitMs: 20_000 }));
    share.note("a.test", 2n, history({ visits: 1, changes: 0 }));
    const estimate = share.estimate(20_000);
    expect(estimate?.pages).toBe(1);
    expect(estimate?.freshness).toBeCloseTo(Math.exp(-1), 12);
    expect(new ShareFreshness().estimate(0)).toBeUndefined();
  });

  it("takes a page's sitemap changefreq for its rate before its age, until its visits tell", () => {
    const share = new ShareFreshness();
    const hourly = history({ visits: 1, changes: 0, changefreq: "hourly", ageAtFirstVisitMs: 1000 });
    share.note("a.test", 1n, hourly);
    expect(share.estimate(3_600_000)?.freshness).toBeCloseTo(Math.exp(-1), 12);
    share.note("a.test", 2n, history({ visits: 1, changes: 0, changefreq: "never" }));
    share.note("a.test", 3n, history({ visits: 1, changes: 0, changefreq: "always" }));
    expect(share.estimate(3_600_000)?.freshness).toBeCloseTo((Math.exp(-1) + 1 + 0) / 3, 12);
    // Its own estimate wins: found unchanged at every visit, the "always" page is fresh.
    share.note("a.test", 3n, history({ changes: 0, changefreq: "always" }));
    expect(share.estimate(3_600_000)?.freshness).toBeCloseTo((Math.exp(-1) + 1 + 1) / 3, 12);
  });

  it("keeps one entry a page, updated by each visit, and forgets a host handed away", () => {
    const share = new ShareFreshness();
    share.note("a.test", 1n, history({ lastAtMs: 0 }));
    share.note("a.test", 1n, history({ lastAtMs: 50_000 }));
    share.note("b.test", 2n, history({ changes: 0 }));
    expect(share.estimate(50_000)).toEqual({ freshness: 1, pages: 2 });
    share.forget("b.test");
    expect(share.estimate(50_000)?.pages).toBe(1);
    share.forget("a.test");
    expect(share.estimate(50_000)).toBeUndefined();
  });

  it("estimates a large share from a bounded sample, each page kept or not by its fingerprint alone", () => {
    const share = new ShareFreshness(256);
    // Half the pages never change (fresh), half change fast and were visited long ago (stale).
    for (let i = 0; i < 20_000; i++) {
      const fresh = i % 2 === 0;
      share.note(
        "a.test",
        fingerprintOf(i),
        history(fresh ? { changes: 0 } : { changes: 4, lastAtMs: -1e9 }),
      );
    }
    const estimate = share.estimate(0);
    expect(estimate?.pages).toBeLessThanOrEqual(256);
    expect(estimate?.pages).toBeGreaterThanOrEqual(64);
    expect(estimate?.freshness).toBeGreaterThan(0.35);
    expect(estimate?.freshness).toBeLessThan(0.65);
    // A page outside the sample stays out when visited again; one inside is updated in place.
    const before = estimate?.pages;
    for (let i = 0; i < 20_000; i += 2) share.note("a.test", fingerprintOf(i), history({ changes: 0 }));
    expect(share.estimate(0)?.pages).toBe(before);
  });
});
