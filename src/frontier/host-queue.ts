import type { HostRecord, StoredQueueEntry } from "../storage/index.js";

const WINDOW_COMPLETE = 1;
const DRAINING = 2;
const MAY_REPEAT = 4;

/**
 * One host's FIFO of URLs. The queue itself lives in the state store; memory holds at most a bounded
 * window of its head, and only while the host is being visited (the frontier evicts idle windows), so
 * an idle host costs this object and its record: no array, the booleans packed in one number.
 */
export class HostQueue {
  /** Head entries loaded from (or appended straight to) the store; undefined while empty. */
  private entries: StoredQueueEntry[] | undefined;
  /** {@link WINDOW_COMPLETE} | {@link DRAINING} | {@link MAY_REPEAT}. */
  private flags: number;
  /** Sequence number to read from when the window runs dry and is not complete. */
  nextReadSeq: number;
  /** Entries queued and not yet taken for fetching. */
  waiting: number;
  /** Entries taken and not yet completed. */
  inFlight = 0;
  /** Bumped by every drain or eviction, so a window load that raced with it is thrown away. */
  generation = 0;

  constructor(
    readonly host: string,
    readonly record: HostRecord,
    waiting: number,
    headSeq: number,
  ) {
    this.waiting = waiting;
    this.nextReadSeq = headSeq;
    this.flags = waiting === 0 ? WINDOW_COMPLETE : 0;
  }

  /** Head entries in sequence order (allocated on first use; assigning an empty array frees it). */
  get window(): StoredQueueEntry[] {
    this.entries ??= [];
    return this.entries;
  }

  set window(entries: StoredQueueEntry[]) {
    this.entries = entries.length > 0 ? entries : undefined;
  }

  /** Entries held in memory, without allocating a window. */
  get windowLength(): number {
    return this.entries?.length ?? 0;
  }

  /** True when the window holds every stored entry from its first to `record.nextSeq - 1`. */
  get windowComplete(): boolean {
    return (this.flags & WINDOW_COMPLETE) !== 0;
  }

  set windowComplete(value: boolean) {
    this.setFlag(WINDOW_COMPLETE, value);
  }

  /** True while the queue is being handed to another agent: nothing is taken meanwhile. */
  get draining(): boolean {
    return (this.flags & DRAINING) !== 0;
  }

  set draining(value: boolean) {
    this.setFlag(DRAINING, value);
  }

  /** True when URLs may have been queued again after a fetch here (recovered from a dead peer). */
  get mayRepeat(): boolean {
    return (this.flags & MAY_REPEAT) !== 0;
  }

  set mayRepeat(value: boolean) {
    this.setFlag(MAY_REPEAT, value);
  }

  /** True when the queue has entries to take. */
  get hasWork(): boolean {
    return this.waiting > 0;
  }

  /** True when new entries may be appended to the window instead of being read back from disk later. */
  get windowLive(): boolean {
    return (this.flags & WINDOW_COMPLETE) !== 0 && this.entries !== undefined;
  }

  /**
   * Drops the window (its entries stay on disk, read again on the next take); returns how many entries
   * were dropped. Only for a host with nothing in flight and no drain running.
   */
  evictWindow(): number {
    const entries = this.entries;
    if (entries === undefined || this.inFlight > 0 || this.draining) return 0;
    this.entries = undefined;
    // A take may be loading into this empty array: the new generation makes it start over.
    this.generation++;
    if (entries.length === 0) return 0;
    let head = Number.MAX_SAFE_INTEGER;
    for (const entry of entries) head = Math.min(head, entry.seq);
    this.nextReadSeq = head;
    this.flags &= ~WINDOW_COMPLETE;
    return entries.length;
  }

  /**
   * True when nothing refers to this object's identity: no window array (a take loading one holds an
   * empty array), nothing in flight, no drain. Such a queue may be packed by the `HostTable`.
   */
  get isIdle(): boolean {
    return this.entries === undefined && this.inFlight === 0 && (this.flags & DRAINING) === 0;
  }

  /** The booleans as one number, for packing. */
  get packedFlags(): number {
    return this.flags;
  }

  set packedFlags(flags: number) {
    this.flags = flags;
  }

  private setFlag(flag: number, value: boolean): void {
    this.flags = value ? this.flags | flag : this.flags & ~flag;
  }
}
