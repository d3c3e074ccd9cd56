import { describe, expect, it } from "vitest";
import {
  BandwidthGate,
  type BandwidthGateOptions,
  type BandwidthTicket,
} from "../../src/fetching/bandwidth-gate.js";
import { TransferRates } from "../../src/fetching/transfer-rates.js";
import { bytesWithin } from "../support/download-windows.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * The bandwidth bound on a manual clock: downloads simulated as tickets held for their duration, the
 * bytes each moves spread evenly over it, and the bound checked over sliding windows — the bytes of any
 * window at most the bound's and one page.
 */

const KB = 1024;
const MB = 1024 * KB;

interface Server {
  readonly host: string;
  /** Its real rate, bytes/s. */
  readonly bytesPerSecond: number;
  readonly pageBytes: number;
}

/** A download as it happened. */
interface Download {
  readonly host: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly bytes: number;
}

function gateOf(options: Partial<BandwidthGateOptions> & { maxBytesPerSecond: number }) {
  const clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
  const rates = new TransferRates({ bytesPerSecond: options.maxBytesPerSecond, bytes: 64 * KB });
  const gate = new BandwidthGate({ searchDepth: 10, control: "predictive", ...options }, { clock, rates });
  return { clock, rates, gate };
}

/**
 * Runs one worker per server for `seconds`: each fetches page after page through the gate, a download
 * taking pageBytes / bytesPerSecond. Returns the downloads.
 */
async function crawl(
  gate: BandwidthGate,
  clock: ManualClock,
  servers: readonly Server[],
  seconds: number,
): Promise<Download[]> {
  const downloads: Download[] = [];
  const endAt = clock.now() + seconds * 1000;
  let stopped = false;
  const worker = async (server: Server) => {
    while (!stopped) {
      const ticket: BandwidthTicket = await gate.acquire(server.host);
      const startMs = clock.now();
      const durationMs = Math.max(1, Math.round((server.pageBytes * 1000) / server.bytesPerSecond));
      await new Promise<void>((resolve) => clock.setTimeout(resolve, durationMs));
      downloads.push({ host: server.host, startMs, endMs: clock.now(), bytes: server.pageBytes });
      ticket.done(server.pageBytes, durationMs);
    }
  };
  const running = servers.map((server) => worker(server));
  while (clock.now() < endAt) {
    clock.advance(1);
    // Let the promise callbacks of the timers that fired run before time moves on.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
  stopped = true;
  void running;
  return downloads.filter((d) => d.endMs <= endAt);
}

/** The most downloads in flight at once. */
function peakConcurrency(downloads: readonly Download[]): number {
  const events = downloads.flatMap((d) => [
    { atMs: d.startMs, delta: 1 },
    { atMs: d.endMs, delta: -1 },
  ]);
  // Ends before starts at the same moment: a download ending as another starts is not overlap.
  events.sort((a, b) => a.atMs - b.atMs || a.delta - b.delta);
  let now = 0;
  let peak = 0;
  for (const event of events) {
    now += event.delta;
    peak = Math.max(peak, now);
  }
  return peak;
}

/** The largest excess over the bound of any window of `windowMs` (sliding by 10 ms), in bytes. */
function worstExcess(
  downloads: readonly Download[],
  bound: number,
  windowMs: number,
  from: number,
  to: number,
) {
  let worst = Number.NEGATIVE_INFINITY;
  for (let start = from; start + windowMs <= to; start += 10) {
    worst = Math.max(worst, bytesWithin(downloads, start, start + windowMs) - (bound * windowMs) / 1000);
  }
  return worst;
}

describe("BandwidthGate, predictive", () => {
  it("keeps fast servers fetched one after the other at the bound: mean within 10%, no window over by a page", async () => {
    const bound = 2 * MB;
    const { gate, clock } = gateOf({ maxBytesPerSecond: bound });
    const servers = Array.from({ length: 4 }, (_, i) => ({
      host: `fast${i}.test`,
      bytesPerSecond: 50 * MB,
      pageBytes: 100 * KB,
    }));
    const start = clock.now();
    const downloads = await crawl(gate, clock, servers, 10);
    const end = start + 10_000;
    const total = bytesWithin(downloads, start, end);
    expect(total / (10 * bound)).toBeGreaterThan(0.9);
    expect(total).toBeLessThanOrEqual(10 * bound + 100 * KB);
    for (const windowMs of [100, 500, 2000]) {
      expect(worstExcess(downloads, bound, windowMs, start, end)).toBeLessThanOrEqual(100 * KB);
    }
  });

  it("runs slow servers side by side, their forecast rates summing to the bound", async () => {
    const bound = 1 * MB;
    const { gate, clock } = gateOf({ maxBytesPerSecond: bound });
    const servers = Array.from({ length: 30 }, (_, i) => ({
      host: `slow${i}.test`,
      bytesPerSecond: 100 * KB,
      pageBytes: 50 * KB,
    }));
    const start = clock.now();
    const downloads = await crawl(gate, clock, servers, 20);
    const end = start + 20_000;
    const peak = peakConcurrency(downloads);
    // Once the rates are learnt (the first seconds), about bound / rate downloads at once.
    const mean = bytesWithin(downloads, start + 5000, end) / 15;
    expect(mean / bound).toBeGreaterThan(0.85);
    expect(mean / bound).toBeLessThanOrEqual(1.05);
    expect(peak).toBeGreaterThan(5);
    expect(peak).toBeLessThanOrEqual(12);
    expect(worstExcess(downloads, bound, 1000, start, end)).toBeLessThanOrEqual(50 * KB + 0.05 * bound);
  });

  it("searches past a waiting fetch that does not fit for one that does, within its depth", async () => {
    for (const [searchDepth, expected] of [
      [1, ["a.test"]],
      [3, ["a.test", "slow.test"]],
    ] as const) {
      const { gate, rates, clock } = gateOf({ maxBytesPerSecond: 1000 * KB, searchDepth });
      const now = clock.now();
      // Long downloads (10 s each), so their shares are their rates.
      rates.observe("a.test", 6000 * KB, 10_000, now); // 600 KB/s
      rates.observe("fast.test", 8000 * KB, 10_000, now); // 800 KB/s
      rates.observe("slow.test", 1000 * KB, 10_000, now); // 100 KB/s
      // Past the byte budget of the first start, so only the rates decide.
      const started: string[] = [];
      const first = await gate.acquire("a.test");
      started.push("a.test");
      clock.advance(7000);
      void gate.acquire("fast.test").then(() => started.push("fast.test"));
      void gate.acquire("slow.test").then(() => started.push("slow.test"));
      for (let i = 0; i < 5; i++) await Promise.resolve();
      expect([searchDepth, started]).toEqual([searchDepth, expected]);
      expect(gate.waitingFetches).toBe(searchDepth === 1 ? 2 : 1);
      first.done(6000 * KB, 10_000);
      // Once the byte budget of the starts so far is made up (at most 7,000 KB at 1,000 KB/s).
      clock.advance(7000);
      for (let i = 0; i < 5; i++) await Promise.resolve();
      expect(started).toContain("fast.test");
    }
  });

  it("lets an aborted fetch go without a ticket, and the others through", async () => {
    const { gate, clock } = gateOf({ maxBytesPerSecond: 100 * KB });
    const held = await gate.acquire("a.test");
    const abort = new AbortController();
    const aborted = gate.acquire("b.test", abort.signal);
    const next = gate.acquire("c.test");
    abort.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    expect(gate.waitingFetches).toBe(1);
    held.done(1 * KB, 10);
    clock.advance(1000);
    await expect(next).resolves.toBeDefined();
    await expect(gate.acquire("d.test", abort.signal)).rejects.toThrow("stop");
  });

  it("refuses a bound or a depth that is not positive", () => {
    const clock = new ManualClock();
    const rates = new TransferRates({ bytesPerSecond: 1, bytes: 1 });
    expect(
      () =>
        new BandwidthGate({ maxBytesPerSecond: 0, searchDepth: 1, control: "predictive" }, { clock, rates }),
    ).toThrow(/bandwidth bound/);
    expect(
      () =>
        new BandwidthGate({ maxBytesPerSecond: 10, searchDepth: 0, control: "predictive" }, { clock, rates }),
    ).toThrow(/search depth/);
  });
});

describe("BandwidthGate, stop-and-go", () => {
  it("starts everything while under the bound and nothing while over: it overshoots, as the naive control does", async () => {
    const bound = 2 * MB;
    const { gate, clock } = gateOf({ maxBytesPerSecond: bound, control: "stop-and-go" });
    const servers = Array.from({ length: 20 }, (_, i) => ({
      host: `fast${i}.test`,
      bytesPerSecond: 5 * MB,
      pageBytes: 100 * KB,
    }));
    const start = clock.now();
    const downloads = await crawl(gate, clock, servers, 10);
    // Twenty fetches start at every "go": windows far over the bound, which the predictive one avoids.
    expect(worstExcess(downloads, bound, 500, start, start + 10_000)).toBeGreaterThan(500 * KB);
    const mean = bytesWithin(downloads, start, start + 10_000) / 10;
    expect(mean).toBeGreaterThan(0.5 * bound);
  });
});

describe("TransferRates", () => {
  it("forecasts a host from its own downloads, an unknown host from all, and knows nothing at first", () => {
    const rates = new TransferRates({ bytesPerSecond: 123, bytes: 456 });
    const noon = Date.UTC(2026, 10, 27, 12);
    expect(rates.forecast("a.test", noon)).toEqual({ bytesPerSecond: 123, bytes: 456 });
    rates.observe("a.test", 100 * KB, 1000, noon);
    rates.observe("b.test", 10 * KB, 1000, noon);
    expect(rates.forecast("a.test", noon).bytesPerSecond).toBeCloseTo(100 * KB, -2);
    expect(rates.forecast("b.test", noon).bytesPerSecond).toBeCloseTo(10 * KB, -2);
    // Unknown: the moving average of everything seen.
    const other = rates.forecast("c.test", noon).bytesPerSecond;
    expect(other).toBeGreaterThan(10 * KB);
    expect(other).toBeLessThan(100 * KB);
    // Failures and empty downloads teach nothing.
    rates.observe("a.test", 0, 10, noon);
    expect(rates.forecast("a.test", noon).bytesPerSecond).toBeCloseTo(100 * KB, -2);
  });

  it("keeps the hosts downloaded from last, up to its bound; a forgotten host is forecast from all", () => {
    const rates = new TransferRates({ bytesPerSecond: 1, bytes: 1 }, 2);
    const noon = Date.UTC(2026, 10, 27, 12);
    rates.observe("a.test", 100 * KB, 1000, noon);
    rates.observe("b.test", 10 * KB, 1000, noon);
    // a is downloaded from again: b is now the one downloaded from longest ago, and goes first.
    rates.observe("a.test", 100 * KB, 1000, noon);
    rates.observe("c.test", 50 * KB, 1000, noon);
    expect(rates.forecast("a.test", noon).bytesPerSecond).toBeCloseTo(100 * KB, -2);
    expect(rates.forecast("c.test", noon).bytesPerSecond).toBeCloseTo(50 * KB, -2);
    expect(rates.forecast("b.test", noon)).toEqual(rates.forecast("never.test", noon));
    expect(rates.forecast("b.test", noon).bytesPerSecond).toBeGreaterThan(10 * KB);
  });

  it("learns the hour of the day: a server slower every evening is forecast slower in the evening only", () => {
    const rates = new TransferRates({ bytesPerSecond: 1, bytes: 1 });
    for (let day = 1; day <= 20; day++) {
      for (const host of ["a.test", "b.test", "c.test"]) {
        rates.observe(host, 100 * KB, 1000, Date.UTC(2026, 9, day, 10));
        rates.observe(host, 100 * KB, 4000, Date.UTC(2026, 9, day, 20));
      }
    }
    const morning = rates.forecast("a.test", Date.UTC(2026, 10, 27, 10)).bytesPerSecond;
    const evening = rates.forecast("a.test", Date.UTC(2026, 10, 27, 20)).bytesPerSecond;
    expect(evening / morning).toBeLessThan(0.6);
    expect(evening / morning).toBeGreaterThan(0.15);
  });
});
