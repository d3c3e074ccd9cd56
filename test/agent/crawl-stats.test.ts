import { describe, expect, it } from "vitest";
import { CrawlStats, communicationOverhead } from "../../src/agent/crawl-stats.js";
import { ManualClock } from "../support/manual-clock.js";

describe("CrawlStats", () => {
  it("reports counters as last made durable: a page counted in memory is not reported until written", () => {
    const stats = new CrawlStats(new ManualClock(0));
    stats.recordFetch(100, 200);
    stats.peer("agent-2").urlsSent += 3;
    expect(stats.pagesFetched).toBe(1);
    expect(stats.durable.pagesFetched).toBe(0);
    expect(stats.durablePagesThisRun).toBe(0);
    const batch = stats.counters();
    stats.recordFetch(50, 404); // fetched while the batch is written: not in it
    stats.markDurable(batch);
    expect(stats.durable).toMatchObject({ pagesFetched: 1, bytesFetched: 100, statusClasses: { "2xx": 1 } });
    expect(stats.durablePagesThisRun).toBe(1);
    expect(communicationOverhead(stats.durable)).toBe(3);
    // Traffic counted after the write stays out of the durable figures (it used to be the same record).
    stats.peer("agent-2").urlsSent += 7;
    expect(stats.durable.peers["agent-2"]?.urlsSent).toBe(3);
    expect(communicationOverhead(stats.durable)).toBe(3);
  });

  it("takes restored counters as durable, and counts this run's pages from them", () => {
    const first = new CrawlStats(new ManualClock(0));
    for (let i = 0; i < 4; i++) first.recordFetch(10, 200);
    first.peer("agent-2").urlsSent = 2;
    const restarted = new CrawlStats(new ManualClock(0));
    restarted.restore(first.counters());
    expect(restarted.durable.pagesFetched).toBe(4);
    expect(restarted.durablePagesThisRun).toBe(0);
    expect(communicationOverhead(restarted.durable)).toBe(0.5);
    restarted.recordFetch(10, 200);
    restarted.markDurable(restarted.counters());
    expect(restarted.durablePagesThisRun).toBe(1);
    expect(communicationOverhead(new CrawlStats(new ManualClock(0)).durable)).toBe(0);
  });
});
