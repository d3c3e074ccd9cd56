import { HostQueue } from "./host-queue.js";

const INITIAL_SLOTS = 1024;
/** Live queues kept before a sweep looks for idle ones to pack (the bound grows if few are idle). */
const MIN_LIVE_BEFORE_SWEEP = 4096;

/**
 * Every host of the frontier, by name, as a `Map` of {@link HostQueue}s would hold them, but packed:
 * a host that is idle (no window in memory, nothing in flight, no drain running) lives in typed
 * columns, 25 bytes plus its `Map` entry, and becomes a {@link HostQueue} again when asked for.
 *
 * A queue handed out stays valid while its holder needs it: packing only takes queues that have no
 * window array (a take that is loading one holds an empty array, see {@link HostQueue.window}),
 * nothing in flight and no drain; and it happens inside {@link get}, before the lookup.
 */
export class HostTable {
  /** Slot of each host in the columns. */
  private readonly slots = new Map<string, number>();
  /** Queues in object form, for hosts in use or not swept yet. */
  private readonly live = new Map<string, HostQueue>();
  private nextSeq = new Float64Array(INITIAL_SLOTS);
  private nextReadSeq = new Float64Array(INITIAL_SLOTS);
  private fetched = new Uint32Array(INITIAL_SLOTS);
  private waiting = new Uint32Array(INITIAL_SLOTS);
  private flags = new Uint8Array(INITIAL_SLOTS);
  /** `HostRecord.abandoned` of the few packed hosts given up on. */
  private readonly abandoned = new Map<number, string>();
  private sweepAt = MIN_LIVE_BEFORE_SWEEP;

  /** Number of hosts. */
  get size(): number {
    return this.slots.size;
  }

  /** Hosts in object form now (for tests and figures). */
  get liveSize(): number {
    return this.live.size;
  }

  /** The queue of `host` (unpacked if needed), or undefined when the host is unknown. */
  get(host: string): HostQueue | undefined {
    if (this.live.size >= this.sweepAt) this.sweep();
    const queue = this.live.get(host);
    if (queue !== undefined) return queue;
    const slot = this.slots.get(host);
    return slot === undefined ? undefined : this.unpack(host, slot);
  }

  /** Adds or replaces the queue of `host`. */
  set(host: string, queue: HostQueue): this {
    if (!this.slots.has(host)) this.slots.set(host, this.slots.size);
    this.live.set(host, queue);
    return this;
  }

  /** Every host name. */
  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** Hosts with URLs waiting, without unpacking any. */
  hostsWithWork(): string[] {
    const result: string[] = [];
    for (const [host, slot] of this.slots) {
      const queue = this.live.get(host);
      if (queue === undefined ? (this.waiting[slot] as number) > 0 : queue.hasWork) result.push(host);
    }
    return result;
  }

  /** URLs waiting over every host, without unpacking any. */
  totalWaiting(): number {
    let total = 0;
    for (const [host, slot] of this.slots)
      total += this.live.get(host)?.waiting ?? (this.waiting[slot] as number);
    return total;
  }

  /** Packs every queue that is idle; returns how many are still live. */
  sweep(): number {
    for (const [host, queue] of this.live) {
      if (!queue.isIdle) continue;
      this.pack(this.slots.get(host) as number, queue);
      this.live.delete(host);
    }
    // Busy queues stay: sweep again only once as many more have come alive.
    this.sweepAt = Math.max(MIN_LIVE_BEFORE_SWEEP, this.live.size * 2);
    return this.live.size;
  }

  private pack(slot: number, queue: HostQueue): void {
    this.ensureCapacity(slot);
    const record = queue.record;
    this.nextSeq[slot] = record.nextSeq;
    this.fetched[slot] = record.fetched;
    if (record.abandoned !== undefined) this.abandoned.set(slot, record.abandoned);
    else this.abandoned.delete(slot);
    this.waiting[slot] = queue.waiting;
    this.nextReadSeq[slot] = queue.nextReadSeq;
    this.flags[slot] = queue.packedFlags;
  }

  private unpack(host: string, slot: number): HostQueue {
    const abandoned = this.abandoned.get(slot);
    const record = {
      nextSeq: this.nextSeq[slot] as number,
      fetched: this.fetched[slot] as number,
      ...(abandoned === undefined ? {} : { abandoned }),
    };
    const queue = new HostQueue(host, record, this.waiting[slot] as number, this.nextReadSeq[slot] as number);
    queue.packedFlags = this.flags[slot] as number;
    this.live.set(host, queue);
    return queue;
  }

  private ensureCapacity(slot: number): void {
    if (slot < this.flags.length) return;
    let length = this.flags.length;
    while (length <= slot) length *= 2;
    this.nextSeq = grown(this.nextSeq, new Float64Array(length));
    this.nextReadSeq = grown(this.nextReadSeq, new Float64Array(length));
    this.fetched = grown(this.fetched, new Uint32Array(length));
    this.waiting = grown(this.waiting, new Uint32Array(length));
    this.flags = grown(this.flags, new Uint8Array(length));
  }
}

function grown<T extends Float64Array | Uint32Array | Uint8Array>(old: T, next: T): T {
  next.set(old);
  return next;
}
