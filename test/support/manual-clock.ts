import type { Clock, TimerHandle } from "../../src/clock.js";

/** A {@link Clock} that moves only when told to, firing due timers in order: for timing logic in tests. */
export class ManualClock implements Clock {
  private time = 1_000_000;
  private readonly timers = new Map<object, { at: number; callback: () => void }>();

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

  /** Moves time forward and fires the timers now due, earliest first. */
  advance(ms: number): void {
    this.time += ms;
    const due = [...this.timers].filter(([, t]) => t.at <= this.time).sort((a, b) => a[1].at - b[1].at);
    for (const [handle, timer] of due) {
      if (this.timers.delete(handle)) timer.callback();
    }
  }
}
