import type { Clock, TimerHandle } from "../clock.js";
import type { QueuedUrl } from "../storage/index.js";
import type { UrlBatchAck } from "../transport/index.js";
import type { BatchState } from "./flush-policy.js";

/** A URL buffered for a destination of the URL exchange. */
export interface PendingUrl extends QueuedUrl {
  readonly host: string;
  /** The URL's fingerprint, the key of its outbox records. */
  readonly fingerprint: bigint;
  /** Local time it was buffered. */
  readonly atMs: number;
}

/**
 * Hosts remembered per destination as sent before; past this the memory starts over (the hosts then
 * count as new again: a batch sent sooner, only while the destination has slots to spare).
 */
const HOSTS_REMEMBERED_PER_PEER = 4096;

/** Characters of URLs per batch at most, well under the 4 MiB message limit of the transport. */
const MAX_BATCH_CHARS = 2 * 1024 * 1024;

/**
 * What the URL exchange keeps for one destination (see url-exchange.ts): the URLs buffered for it, the
 * timer and the batch on their way, and what decides how long its batches wait — its last heartbeat
 * load, its fruitless batches in a row, the hosts buffered for it before.
 */
export class PeerOutbox {
  /** URLs buffered and not sent yet, oldest first. */
  private buffer: PendingUrl[] = [];
  /** Sends the next batch when it fires. */
  private timer: TimerHandle | undefined = undefined;
  /** When `timer` fires. */
  private dueAtMs = 0;
  /** True while a batch is on its way (one at a time per destination). */
  sending = false;
  /** Aborts the batch on its way (its call, or the wait before it is sent again). */
  private call: AbortController | undefined = undefined;
  /** Queued URLs in the destination's last heartbeat load. */
  private peerQueuedUrls: number | undefined = undefined;
  /** Acknowledged batches in a row that were all duplicates to the destination. */
  private fruitlessBatches = 0;
  /** Visit slots the destination had to spare in its last heartbeat load (hosts it could start now). */
  private spareHostSlots = 0;
  /** Hosts buffered for the destination before (the latest {@link HOSTS_REMEMBERED_PER_PEER}). */
  private readonly hostsSent = new Set<string>();
  /** When the oldest buffered URL of a host not sent to the destination before arrived. */
  private newHostAtMs: number | undefined = undefined;

  constructor(private readonly clock: Clock) {}

  /** URLs buffered. */
  get size(): number {
    return this.buffer.length;
  }

  /** Local time the oldest buffered URL arrived (undefined: none buffered). */
  get oldestAtMs(): number | undefined {
    return this.buffer[0]?.atMs;
  }

  /** Buffers `item`; a host not buffered for the destination before makes the batch one with a new host. */
  push(item: PendingUrl): void {
    if (!this.hostsSent.has(item.host)) {
      if (this.hostsSent.size >= HOSTS_REMEMBERED_PER_PEER) this.hostsSent.clear();
      this.hostsSent.add(item.host);
      this.newHostAtMs ??= item.atMs;
    }
    this.buffer.push(item);
  }

  /** Takes the next batch off the buffer: at most `maxUrls` URLs and {@link MAX_BATCH_CHARS} characters. */
  takeBatch(maxUrls: number): PendingUrl[] {
    let chars = 0;
    let count = 0;
    for (const item of this.buffer) {
      if (count >= maxUrls || (count > 0 && chars + item.url.length > MAX_BATCH_CHARS)) break;
      chars += item.url.length;
      count++;
    }
    this.newHostAtMs = undefined;
    return this.buffer.splice(0, count);
  }

  /** Takes every buffered URL off the buffer. */
  takeAll(): PendingUrl[] {
    const urls = this.buffer;
    this.buffer = [];
    return urls;
  }

  /** The destination's heartbeat load: how much work it has queued, and the hosts it could start now. */
  noteLoad(load: {
    readonly idle: boolean;
    readonly queuedUrls: number;
    readonly spareHostSlots: number;
  }): void {
    this.peerQueuedUrls = load.idle ? 0 : load.queuedUrls;
    this.spareHostSlots = load.spareHostSlots;
  }

  /** The destination acknowledged a batch: one more fruitless batch in a row when no URL was new to it. */
  noteAck(ack: UrlBatchAck): void {
    this.fruitlessBatches = ack.accepted + ack.forwarded === 0 ? this.fruitlessBatches + 1 : 0;
  }

  /** The buffered batch as the flush policy weighs it (the buffer must not be empty). */
  batchState(oldestAtMs: number, localIdle: boolean): BatchState {
    return {
      urls: this.buffer.length,
      oldestAtMs,
      peerQueuedUrls: this.peerQueuedUrls,
      localIdle,
      fruitlessBatches: this.fruitlessBatches,
      newHostAtMs: this.spareHostSlots > 0 ? this.newHostAtMs : undefined,
    };
  }

  /**
   * Has `send` called in `delayMs` from `now`, unless the timer set before fires by then. A delay of 0
   * still goes through a timer, so the links of one page, routed synchronously, travel together.
   */
  sendIn(now: number, delayMs: number, send: () => void): void {
    if (this.timer !== undefined) {
      if (this.dueAtMs <= now + delayMs) return;
      this.clock.clearTimeout(this.timer);
    }
    this.dueAtMs = now + delayMs;
    this.timer = this.clock.setTimeout(send, delayMs);
  }

  /** Clears the timer, if set. */
  clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Aborts the batch on its way with `reason`, if any. */
  abortCall(reason: unknown): void {
    this.call?.abort(reason);
  }

  /**
   * Runs one step of a batch's sending (its call, or the wait before the next), abortable by
   * {@link abortCall} (a view change) or by `stopped` (the exchange's stop).
   */
  async attempt<T>(stopped: AbortSignal, step: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const call = new AbortController();
    const stop = () => call.abort(stopped.reason);
    if (stopped.aborted) stop();
    stopped.addEventListener("abort", stop, { once: true });
    this.call = call;
    try {
      return await step(call.signal);
    } finally {
      stopped.removeEventListener("abort", stop);
      this.call = undefined;
    }
  }
}
