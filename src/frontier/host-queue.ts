import type { HostRecord, StoredQueueEntry } from "../storage/state-store.js";

/**
 * One host's FIFO of URLs. The queue itself lives in the state store; memory holds only a bounded
 * window of its head, so a frontier of millions of URLs costs a few entries per host.
 */
export class HostQueue {
  /** Head entries loaded from (or appended straight to) the store, in sequence order. */
  window: StoredQueueEntry[] = [];
  /** True when the window holds every stored entry from its first to `record.nextSeq - 1`. */
  windowComplete: boolean;
  /** Sequence number to read from when the window runs dry and is not complete. */
  nextReadSeq: number;
  /** Entries queued and not yet taken for fetching. */
  waiting: number;
  /** Entries taken and not yet completed. */
  inFlight = 0;
  /** Bumped by every drain, so a window load that raced with it is thrown away. */
  generation = 0;
  /** True while the queue is being handed to another agent: nothing is taken meanwhile. */
  draining = false;
  /** True when URLs may have been queued again after a fetch here (recovered from a dead peer). */
  mayRepeat = false;

  constructor(
    readonly host: string,
    readonly record: HostRecord,
    waiting: number,
    headSeq: number,
  ) {
    this.waiting = waiting;
    this.nextReadSeq = headSeq;
    this.windowComplete = waiting === 0;
  }

  /** True when the queue has entries to take. */
  get hasWork(): boolean {
    return this.waiting > 0;
  }
}
