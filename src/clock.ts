/**
 * Time as a dependency: heartbeats, suspicion timeouts and politeness delays read the clock through
 * this interface, so tests substitute fake timers and the laboratory can run on virtual time.
 */

import { watchAbort } from "./abort-watch.js";

/** A handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** A source of time and timers. */
export interface Clock {
  /** Milliseconds since the epoch (wall clock, may be faked). */
  now(): number;
  /** Runs `callback` after `delayMs` milliseconds. */
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer from {@link Clock.setTimeout}; unknown handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `Date.now()` and Node's timers (unref'd, so they never keep a process alive alone). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    timer.unref();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Resolves after `delayMs` on `clock`, or rejects with the signal's reason when aborted first. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const handle = clock.setTimeout(() => {
      unwatch?.();
      resolve();
    }, delayMs);
    const unwatch =
      signal &&
      watchAbort(signal, () => {
        clock.clearTimeout(handle);
        reject(signal.reason);
      });
  });
}

/**
 * Runs `task` for at most `limitMs`: resolves with its result, or with undefined once the time is up
 * (a rejection counts as no result). At the time up, the signal given to the task is aborted: a task
 * that reads it stops there; one that does not goes on unheard.
 */
export async function within<T>(
  clock: Clock,
  limitMs: number,
  task: (signal: AbortSignal) => Promise<T>,
): Promise<T | undefined> {
  const timeIsUp = new AbortController();
  let timer: TimerHandle | undefined;
  const timeUp = new Promise<undefined>((resolve) => {
    timer = clock.setTimeout(
      () => {
        timeIsUp.abort(new Error(`time up after ${limitMs} ms`));
        resolve(undefined);
      },
      Math.max(0, limitMs),
    );
  });
  try {
    return await Promise.race([task(timeIsUp.signal).catch(() => undefined), timeUp]);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}
