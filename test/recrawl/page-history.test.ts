import { describe, expect, it } from "vitest";
import {
  afterVisit,
  decodeHistory,
  encodeHistory,
  type PageChange,
  type PageHistory,
} from "../../src/recrawl/index.js";

const MINUTE = 60_000;
const T0 = Date.parse("2026-11-20T00:00:00Z");
const httpDate = (ms: number) => new Date(ms).toUTCString();

/** A visit at `atMs` answered `status` with `Last-Modified: lastModifiedMs` (none when undefined). */
function visit(atMs: number, lastModifiedMs: number | undefined, change?: PageChange, status = 200) {
  return {
    url: "http://a.test/",
    depth: 0,
    result: {
      status,
      startedAtMs: atMs,
      responseHeaders:
        lastModifiedMs === undefined
          ? []
          : ([["last-modified", httpDate(lastModifiedMs)]] as [string, string][]),
    },
    ...(change === undefined ? {} : { change }),
  };
}

/** The history after visits at 0, 10, 20 … minutes with the given dates and findings. */
function visited(
  steps: readonly [lastModifiedMs: number | undefined, change?: PageChange, status?: number][],
): PageHistory {
  let history: PageHistory | undefined;
  for (const [i, [lastModifiedMs, change, status]] of steps.entries()) {
    history = afterVisit(history, visit(T0 + i * 10 * MINUTE, lastModifiedMs, change, status));
  }
  return history as PageHistory;
}

describe("a page's age at its first visit", () => {
  it("is the time since the later of its sitemap lastmod and its Last-Modified, kept from then on", () => {
    const first = afterVisit(undefined, {
      ...visit(T0, T0 - 5 * MINUTE),
      sitemapLastmod: "2026-11-19T23:58:00Z",
    });
    expect(first.ageAtFirstVisitMs).toBe(2 * MINUTE);
    expect(afterVisit(first, visit(T0 + 10 * MINUTE, T0 + 9 * MINUTE, "changed")).ageAtFirstVisitMs).toBe(
      2 * MINUTE,
    );
    expect(afterVisit(undefined, visit(T0, T0 - 5 * MINUTE)).ageAtFirstVisitMs).toBe(5 * MINUTE);
  });

  it("is absent without a readable date, and at least a second for a date in the future", () => {
    expect(afterVisit(undefined, visit(T0, undefined)).ageAtFirstVisitMs).toBeUndefined();
    expect(
      afterVisit(undefined, { ...visit(T0, undefined), sitemapLastmod: "soon" }).ageAtFirstVisitMs,
    ).toBeUndefined();
    expect(afterVisit(undefined, visit(T0, T0 + MINUTE)).ageAtFirstVisitMs).toBe(1000);
  });
});

describe("a page's sitemap changefreq", () => {
  it("is the one it was first fetched with, kept through its revisits (queued without one)", () => {
    const first = afterVisit(undefined, { ...visit(T0, undefined), sitemapChangefreq: "daily" });
    expect(first.changefreq).toBe("daily");
    const second = afterVisit(first, visit(T0 + 10 * MINUTE, undefined, "unchanged"));
    expect(second.changefreq).toBe("daily");
    expect(
      afterVisit(second, { ...visit(T0 + 20 * MINUTE, undefined, "changed"), sitemapChangefreq: "never" })
        .changefreq,
    ).toBe("daily");
    expect(afterVisit(undefined, visit(T0, undefined)).changefreq).toBeUndefined();
  });

  it("is stored with the history, and one of no known value (a later version's) is read back as none", () => {
    const hinted = afterVisit(undefined, { ...visit(T0, undefined), sitemapChangefreq: "weekly" });
    expect(decodeHistory(encodeHistory(hinted))).toEqual(hinted);
    const odd = decodeHistory(encodeHistory({ ...hinted, changefreq: "fortnightly" as "weekly" }));
    expect(odd.changefreq).toBeUndefined();
    expect(odd).toEqual(afterVisit(undefined, visit(T0, undefined)));
  });
});

describe("a page history's Last-Modified record", () => {
  it("counts an interval where the date moved as a change, known unchanged from within the new date's second to the visit", () => {
    const history = visited([[T0 - MINUTE], [T0 + 7 * MINUTE, "changed"]]);
    expect(history.lastModifiedRecord).toEqual({
      intervals: 1,
      changes: 1,
      exposureMs: 3 * MINUTE - 500,
      trusted: true,
    });
  });

  it("counts, over many changes, the time each was known unchanged as it was, though dates have whole seconds", () => {
    // Changes 3 s apart at every tenth of a second past the whole one, each visited 1.6 s after it.
    let history: PageHistory | undefined;
    for (let i = 0; i <= 100; i++) {
      const changedAt = T0 + i * 3000 + ((i % 10) + 0.5) * 100;
      const dated = Math.floor(changedAt / 1000) * 1000;
      history = afterVisit(history, visit(changedAt + 1600, dated, i === 0 ? undefined : "changed"));
    }
    const record = history?.lastModifiedRecord;
    expect(record?.changes).toBe(100);
    // From the dates as they are, 2.1 s a change: the rate estimated at 0.76× the true one.
    expect((record?.exposureMs ?? 0) / 100).toBeCloseTo(1600, 0);
  });

  it("counts the whole interval unchanged when the date stood still or the server answered 304 (the date kept)", () => {
    const history = visited([[T0 - MINUTE], [T0 - MINUTE, "unchanged"], [undefined, "not-modified", 304]]);
    expect(history.lastModifiedRecord).toEqual({
      intervals: 2,
      changes: 0,
      exposureMs: 20 * MINUTE,
      trusted: true,
    });
    expect(history.lastModified).toBe(httpDate(T0 - MINUTE));
  });

  it("keeps a server clock ahead of ours within the interval", () => {
    const history = visited([[T0 - MINUTE], [T0 + 30 * MINUTE, "changed"]]);
    expect(history.lastModifiedRecord?.exposureMs).toBe(0);
    const behind = visited([[T0 - MINUTE], [T0 - 30 * MINUTE, "changed"]]);
    expect(behind.lastModifiedRecord?.exposureMs).toBe(10 * MINUTE);
  });

  it("stops trusting the dates for good once the payload changed under a date that did not", () => {
    const history = visited([[T0], [T0, "changed"], [T0 + 15 * MINUTE, "changed"]]);
    expect(history.lastModifiedRecord).toMatchObject({ intervals: 2, changes: 1, trusted: false });
  });

  it("records nothing for intervals without a readable date on both sides", () => {
    expect(visited([[undefined], [T0, "changed"]]).lastModifiedRecord).toBeUndefined();
    const history = afterVisit(visited([[T0]]), {
      ...visit(T0 + 10 * MINUTE, undefined, "changed"),
      result: {
        status: 200,
        startedAtMs: T0 + 10 * MINUTE,
        responseHeaders: [["last-modified", "yesterday"]],
      },
    });
    expect(history.lastModifiedRecord).toBeUndefined();
    expect(visited([[T0]]).lastModifiedRecord).toBeUndefined();
  });
});
