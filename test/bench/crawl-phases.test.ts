import { describe, expect, it } from "vitest";
import { cpuAt, crawlPhases } from "../../bench/lib/crawl-phases.mjs";

describe("cpuAt", () => {
  const series = [
    [1000, 0.5],
    [2000, 1.5],
    [3000, 1.75],
  ] as const;

  it("reads the CPU between two samples on the line joining them", () => {
    expect(cpuAt(series, 1500)).toBeCloseTo(1, 12);
    expect(cpuAt(series, 2000)).toBe(1.5);
    expect(cpuAt(series, 2600)).toBeCloseTo(1.65, 12);
  });

  it("holds the first and the last sample outside the samples, and 0 without any", () => {
    expect(cpuAt(series, 0)).toBe(0.5);
    expect(cpuAt(series, 9000)).toBe(1.75);
    expect(cpuAt([], 1000)).toBe(0);
  });
});

describe("crawlPhases", () => {
  // 100 pages, one every 10 ms from t = 1,000 ms; spawned at 0, exited at 2,500. The process burns
  // 1 CPU s over its first second (start-up), then 0.2 ms a page, then 0.5 CPU s in its last 0.5 s.
  const pageTimesMs = Array.from({ length: 100 }, (_, i) => 1000 + 10 * i);
  const cpuOf = (ms: number) =>
    ms <= 1000 ? ms / 1000 : ms <= 2000 ? 1 + (0.2 / 1000) * ((ms - 1000) / 10) : 1.02 + (ms - 2000) / 1000;
  const series = Array.from({ length: 26 }, (_, i) => [100 * i, cpuOf(100 * i)] as const);

  it("splits the crawl into start, steady middle and tail whose pages and CPU add up", () => {
    const phases = crawlPhases({ series, pageTimesMs, startedAtMs: 0, exitedAtMs: 2500, cpuSeconds: 1.52 });
    expect(phases.edge).toBe(0.1);
    expect([phases.start.pages, phases.steady.pages, phases.tail.pages]).toEqual([10, 80, 10]);
    // The middle runs from page 10 (t = 1,100) to page 89 (t = 1,890).
    expect(phases.start.seconds).toBeCloseTo(1.1, 12);
    expect(phases.steady.seconds).toBeCloseTo(0.79, 12);
    expect(phases.tail.seconds).toBeCloseTo(0.61, 12);
    expect(phases.steady.cpuMsPerPage).toBeCloseTo((cpuOf(1890) - cpuOf(1100)) * 12.5, 9);
    expect(phases.steady.pagesPerSecond).toBeCloseTo(80 / 0.79, 9);
    expect(phases.start.cpuSeconds + phases.steady.cpuSeconds + phases.tail.cpuSeconds).toBeCloseTo(1.52, 12);
    expect(phases.start.cpuSeconds).toBeCloseTo(cpuOf(1100), 9);
  });

  it("never counts more CPU in a phase than the process spent, nor less than none", () => {
    // The exact total (from the kernel at the reap) is below the last sample's reading.
    const phases = crawlPhases({ series, pageTimesMs, startedAtMs: 0, exitedAtMs: 2500, cpuSeconds: 1 });
    expect(phases.start.cpuSeconds).toBe(1);
    expect(phases.steady.cpuSeconds).toBe(0);
    expect(phases.tail.cpuSeconds).toBe(0);
  });

  it("has an empty start and tail for a crawl of a few pages, and no rates without pages", () => {
    const few = crawlPhases({
      series,
      pageTimesMs: [1000, 1500, 2000],
      startedAtMs: 0,
      exitedAtMs: 2500,
      cpuSeconds: 1.52,
    });
    expect([few.start.pages, few.steady.pages, few.tail.pages]).toEqual([0, 3, 0]);
    expect(few.start.cpuMsPerPage).toBeNaN();
    const none = crawlPhases({ series, pageTimesMs: [], startedAtMs: 0, exitedAtMs: 2500, cpuSeconds: 1.52 });
    expect(none.steady.pages).toBe(0);
    expect(none.steady.cpuMsPerPage).toBeNaN();
    expect(none.start.cpuSeconds + none.steady.cpuSeconds + none.tail.cpuSeconds).toBeCloseTo(1.52, 12);
  });
});
