import { describe, expect, it } from "vitest";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { type EndState, endWaitNotice, nothingFetched } from "../../src/cli/crawl-outcome.js";
import { ErrorCode } from "../../src/errors.js";
import { ManualClock } from "../support/manual-clock.js";

/** The end of a run that fetched nothing: `errors` by class, `unresolved` hosts whose names failed. */
function end(alone: boolean, errors: Record<string, number>, unresolved: number): EndState {
  const stats = new CrawlStats(new ManualClock(0));
  for (const [errorClass, count] of Object.entries(errors)) {
    for (let i = 0; i < count; i++) stats.recordError(errorClass);
  }
  stats.unresolvedHostsThisRun = unresolved;
  const routing = { given: 1, queued: 1, sentAway: 0, seenBefore: 0, outOfScope: 0, errorsBefore: {} };
  return { id: "a", dataDir: "/data/a", stats, routing, alone, hostsFile: "/etc/web.hosts" };
}

describe("nothingFetched", () => {
  it("a lone agent whose every URL failed fails, whatever the reason", () => {
    expect(nothingFetched(end(true, { [ErrorCode.DnsNotFound]: 2 }, 1))?.code).toBe(ErrorCode.NothingFetched);
    expect(nothingFetched(end(true, { http_5xx: 1 }, 0))?.code).toBe(ErrorCode.NothingFetched);
  });

  it("a cluster agent whose share was one or two gone hosts does not fail: the web's doing", () => {
    // A small share of a small web can be a single host whose name is gone (seen on a 12-host web).
    expect(nothingFetched(end(false, { [ErrorCode.DnsNotFound]: 2 }, 1))).toBeUndefined();
    expect(nothingFetched(end(false, { [ErrorCode.DnsNotFound]: 5 }, 2))).toBeUndefined();
    expect(nothingFetched(end(false, { http_5xx: 3 }, 0))).toBeUndefined();
  });

  it("a cluster agent none of whose several hosts resolved blames its resolver, naming the hosts file", () => {
    const failure = nothingFetched(end(false, { [ErrorCode.DnsNotFound]: 3 }, 3));
    expect(failure?.code).toBe(ErrorCode.NothingFetched);
    expect(failure?.message).toContain("agent a fetched no page: every URL it tried failed");
    expect(failure?.message).toContain("/etc/web.hosts");
  });

  it("a cluster agent whose addresses the network policy refused fails, naming the flag", () => {
    const failure = nothingFetched(end(false, { [ErrorCode.AddressForbidden]: 1 }, 0));
    expect(failure?.code).toBe(ErrorCode.NothingFetched);
    expect(failure?.message).toContain("--allow-net CIDR");
  });

  it("an agent that fetched a page does not fail", () => {
    const state = end(true, { [ErrorCode.DnsNotFound]: 9 }, 9);
    state.stats.recordFetch(10, 200);
    expect(nothingFetched(state)).toBeUndefined();
  });
});

describe("endWaitNotice", () => {
  it("says how long an unavailable robots.txt can hold the end of a crawl with --exit-when-done", () => {
    expect(endWaitNotice({ exitWhenDone: true, maxRobotsAttempts: 3, robotsRetryMs: 60_000 })).toContain(
      "tried 3 times 60 s apart before its pages are given up, so the end can wait up to 120 s",
    );
  });

  it("says nothing without --exit-when-done, or for a wait under 10 s", () => {
    expect(
      endWaitNotice({ exitWhenDone: false, maxRobotsAttempts: 3, robotsRetryMs: 60_000 }),
    ).toBeUndefined();
    expect(endWaitNotice({ exitWhenDone: true, maxRobotsAttempts: 2, robotsRetryMs: 100 })).toBeUndefined();
    expect(
      endWaitNotice({ exitWhenDone: true, maxRobotsAttempts: 1, robotsRetryMs: 60_000 }),
    ).toBeUndefined();
  });
});
