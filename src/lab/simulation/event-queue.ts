import { Heap } from "heap-js";

/**
 * The simulated time of a discrete-event simulation: events run one at a time in the order of their
 * times (ties in the order they were scheduled), each advancing {@link now} to its own time.
 */

/** A scheduled event, which {@link EventQueue.cancel} can take back before it runs. */
export interface ScheduledEvent {
  /** When it runs, simulated ms. */
  readonly at: number;
}

interface Entry extends ScheduledEvent {
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

/** See the module's comment. */
export class EventQueue {
  private readonly heap = new Heap<Entry>((a, b) => a.at - b.at || a.seq - b.seq);
  private seq = 0;
  private time = 0;

  /** Simulated milliseconds since the start. */
  get now(): number {
    return this.time;
  }

  /** Events scheduled and not run (cancelled ones included until their time comes). */
  get pending(): number {
    return this.heap.size();
  }

  /** Runs `run` at time `at` (now, if `at` is past). */
  at(at: number, run: () => void): ScheduledEvent {
    const entry: Entry = { at: Math.max(at, this.time), seq: this.seq++, run, cancelled: false };
    this.heap.push(entry);
    return entry;
  }

  /** Runs `run` `delayMs` from now. */
  after(delayMs: number, run: () => void): ScheduledEvent {
    return this.at(this.time + delayMs, run);
  }

  /** Takes back an event that has not run yet. */
  cancel(event: ScheduledEvent): void {
    (event as Entry).cancelled = true;
  }

  /**
   * Runs the events in order until none is left, `done()` says stop (asked after each event), or the
   * next one is due past `untilMs`. Returns how many ran.
   */
  run(done: () => boolean, untilMs = Number.POSITIVE_INFINITY): number {
    let ran = 0;
    for (let next = this.heap.pop(); next !== undefined; next = this.heap.pop()) {
      if (next.cancelled) continue;
      if (next.at > untilMs) {
        this.heap.push(next);
        break;
      }
      this.time = next.at;
      next.run();
      ran++;
      if (done()) break;
    }
    return ran;
  }
}
