import type { Clock, TimerHandle } from "../../src/clock.js";

/**
 * A {@link Clock} that moves only when told to: {@link ManualClock.advance} runs every timer falling due
 * in the window, earliest first, with the time set to each one's due time (so timers set by a callback
 * within the window run too). For timing logic in tests, without sleeps.
 */
export class ManualClock implements Clock {
  private time: number;
  private readonly timers = new Map<object, { at: number; callback: () => void }>();

  constructor(startMs = 1_000_000) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const handle = {};
    this.timers.set(handle, { at: this.time + delayMs, callback });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle);
  }

  /** Timers not yet fired or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /** Delays of the pending timers from now, sorted. */
  get pendingDelays(): number[] {
    return [...this.timers.values()].map((timer) => timer.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, running the timers that fall due on the way. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      let next: [object, { at: number; callback: () => void }] | undefined;
      for (const entry of this.timers) {
        if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      }
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].callback();
    }
    this.time = target;
  }
}
