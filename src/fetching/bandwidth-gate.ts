import { watchAbort } from "../abort-watch.js";
import type { Clock, TimerHandle } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { TransferRates } from "./transfer-rates.js";

/**
 * Diligenti et al.'s bandwidth-bounded crawler: an agent whose downloads together stay under a bound
 * (`--max-bandwidth`). Each page fetch asks the gate before it starts. The `predictive` control
 * forecasts each download's rate and size from its server's past ({@link TransferRates}), takes its
 * share of the link over the next second (its rate, or its bytes over the second when it will be done
 * sooner), sums the shares of the downloads in flight, and starts a download only when the sum stays
 * under the bound — looking, when
 * the first fetch waiting does not fit the free bandwidth, at up to `searchDepth` waiting fetches (the
 * ready hosts) for one that does. Starts are also paced by bytes: each download reserves its forecast
 * size against a budget that refills at the bound and never saves up (it is settled at its real size
 * when it ends), so fast servers fetched one after the other stay under the bound too: over any window,
 * the bytes fetched exceed the bound's by at most one page and the forecasts' errors. The
 * `stop-and-go` control is the naive one it is measured
 * against: no forecast, every waiting fetch starts while the bytes of the last second are under the
 * bound, none while they are over.
 */

/** The ways a {@link BandwidthGate} can hold the bound. */
export const BANDWIDTH_CONTROLS = ["predictive", "stop-and-go"] as const;

/** One of {@link BANDWIDTH_CONTROLS}. */
export type BandwidthControl = (typeof BANDWIDTH_CONTROLS)[number];

/** Waiting fetches looked at for one that fits (`--bandwidth-search-depth`). */
export const DEFAULT_BANDWIDTH_SEARCH_DEPTH = 10;

/** The span over which a download's forecast share of the bandwidth is taken (predictive control). */
const SHARE_WINDOW_MS = 1000;
/** The stop-and-go control's measuring window. */
const STOP_AND_GO_WINDOW_MS = 1000;

/** Options of a {@link BandwidthGate}. */
export interface BandwidthGateOptions {
  /** The bound, bytes per second. */
  readonly maxBytesPerSecond: number;
  /** Waiting fetches looked at for one that fits the free bandwidth (predictive control). */
  readonly searchDepth: number;
  readonly control: BandwidthControl;
}

/** What a {@link BandwidthGate} needs. */
export interface BandwidthGateDeps {
  readonly clock: Clock;
  /** The servers' transfer rates: read for forecasts, told of every download that ends. */
  readonly rates: TransferRates;
}

/** A fetch let through the gate. */
export interface BandwidthTicket {
  /**
   * The download ended, `bytes` (0 for one that failed) in `durationMs`: frees its share of the
   * bandwidth. Only the first call counts.
   */
  done(bytes: number, durationMs: number): void;
}

interface Waiter {
  readonly host: string;
  readonly resolve: (ticket: BandwidthTicket) => void;
  readonly reject: (reason: unknown) => void;
  /** Stops watching the caller's signal. */
  unwatch: (() => void) | undefined;
}

/** See the module's comment. */
export class BandwidthGate {
  private readonly waiting: Waiter[] = [];
  /** Forecast rates of the downloads in flight, summed (predictive control). */
  private predictedInFlight = 0;
  private inFlight = 0;
  /**
   * The byte budget: 0 when a download may start, negative while the downloads started have reserved
   * more than the bound allowed so far. Never above 0: an idle time saves no burst.
   */
  private credit = 0;
  private creditAtMs: number;
  /** Bytes of the downloads ended within the last window, with their ends (stop-and-go control). */
  private readonly recent: { atMs: number; bytes: number }[] = [];
  private timer: TimerHandle | undefined;

  constructor(
    private readonly options: BandwidthGateOptions,
    private readonly deps: BandwidthGateDeps,
  ) {
    if (!(options.maxBytesPerSecond > 0) || !Number.isFinite(options.maxBytesPerSecond)) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `the bandwidth bound must be a positive number of bytes per second, got ${options.maxBytesPerSecond}`,
      );
    }
    if (!Number.isInteger(options.searchDepth) || options.searchDepth < 1) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `the bandwidth search depth must be a positive integer, got ${options.searchDepth}`,
      );
    }
    this.creditAtMs = deps.clock.now();
  }

  /** Fetches waiting for bandwidth. */
  get waitingFetches(): number {
    return this.waiting.length;
  }

  /**
   * Resolves when a fetch from `host` may start, with the ticket to hand back when it ends; rejects with
   * the signal's reason when `signal` aborts first.
   */
  acquire(host: string, signal?: AbortSignal): Promise<BandwidthTicket> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<BandwidthTicket>((resolve, reject) => {
      const waiter: Waiter = { host, resolve, reject, unwatch: undefined };
      waiter.unwatch =
        signal &&
        watchAbort(signal, () => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(signal.reason);
          this.pump();
        });
      this.waiting.push(waiter);
      this.pump();
    });
  }

  /** Lets through the waiting fetches that fit now; sets a timer for when more may. */
  private pump(): void {
    if (this.timer !== undefined) {
      this.deps.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    const now = this.deps.clock.now();
    if (this.options.control === "stop-and-go") this.pumpStopAndGo(now);
    else this.pumpPredictive(now);
  }

  private pumpPredictive(now: number): void {
    const bound = this.options.maxBytesPerSecond;
    this.credit = Math.min(0, this.credit + ((now - this.creditAtMs) * bound) / 1000);
    this.creditAtMs = now;
    for (let i = 0; i < Math.min(this.options.searchDepth, this.waiting.length) && this.credit >= 0; ) {
      const waiter = this.waiting[i] as Waiter;
      const forecast = this.deps.rates.forecast(waiter.host, now);
      // Its share over the next second: its rate, or, for a download done sooner, its bytes spread over
      // the second (a small page from a fast server takes little of the link, however fast its rate).
      const share = Math.min(forecast.bytesPerSecond, (forecast.bytes * 1000) / SHARE_WINDOW_MS);
      const fits = this.inFlight === 0 || this.predictedInFlight + share <= bound;
      if (!fits) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.predictedInFlight += share;
      this.credit -= forecast.bytes;
      this.admit(waiter, (bytes) => {
        this.predictedInFlight = Math.max(0, this.predictedInFlight - share);
        // Settled at its real size: the reservation was a forecast.
        this.credit += forecast.bytes - bytes;
      });
    }
    if (this.waiting.length > 0 && this.credit < 0) {
      // Nothing may start before the budget is back to zero; a download ending wakes the gate earlier.
      this.wakeIn(Math.ceil((-this.credit * 1000) / bound));
    }
  }

  private pumpStopAndGo(now: number): void {
    while (this.recent.length > 0 && (this.recent[0]?.atMs ?? 0) <= now - STOP_AND_GO_WINDOW_MS)
      this.recent.shift();
    const lastSecond = this.recent.reduce((sum, entry) => sum + entry.bytes, 0);
    if (lastSecond * (1000 / STOP_AND_GO_WINDOW_MS) > this.options.maxBytesPerSecond) {
      // Stop: until the oldest download counted leaves the window.
      if (this.waiting.length > 0) this.wakeIn((this.recent[0]?.atMs ?? now) + STOP_AND_GO_WINDOW_MS - now);
      return;
    }
    // Go: everyone.
    for (const waiter of this.waiting.splice(0)) {
      this.admit(waiter, (bytes) => {
        if (bytes > 0) this.recent.push({ atMs: this.deps.clock.now(), bytes });
      });
    }
  }

  private admit(waiter: Waiter, settle: (bytes: number) => void): void {
    waiter.unwatch?.();
    this.inFlight++;
    let ended = false;
    waiter.resolve({
      done: (bytes, durationMs) => {
        if (ended) return;
        ended = true;
        this.inFlight--;
        const now = this.deps.clock.now();
        if (bytes > 0) this.deps.rates.observe(waiter.host, bytes, durationMs, now - durationMs);
        settle(Math.max(0, bytes));
        this.pump();
      },
    });
  }

  private wakeIn(delayMs: number): void {
    this.timer = this.deps.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(1, delayMs),
    );
  }
}
