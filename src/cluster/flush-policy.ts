import { ErrorCode, UbiError } from "../errors.js";

/** Options of a {@link FlushPolicy}. */
export interface FlushPolicyOptions {
  /**
   * URLs that make a batch worth sending at once. Each batch costs one gRPC call and one durable
   * commit at the receiver, so with about 3 URLs sent a page, 1000 costs 0.3 batches per 100 pages.
   * @default 1000
   */
  readonly targetBatchUrls?: number;
  /**
   * Longest the oldest URL of a batch waits when nobody is short of work: a destination that gets few
   * URLs gets them in few messages, at no cost to the crawl since it has work queued (the URLs are
   * durable in this agent's outbox meanwhile). @default 30000
   */
  readonly maxDelayMs?: number;
  /**
   * How long an urgent batch waits for more URLs: the links of a few pages travel together, and a
   * destination starving at the end of a crawl (its links all duplicates by then) does not get one
   * batch a page. @default 250
   */
  readonly urgentDelayMs?: number;
  /**
   * A destination reporting fewer queued URLs than this (a near-empty frontier) is short of work: its
   * URLs are urgent. @default 20
   */
  readonly starvingQueuedUrls?: number;
}

/** What a {@link FlushPolicy} looks at for the batch waiting for one destination. */
export interface BatchState {
  /** URLs buffered for the destination. */
  readonly urls: number;
  /** Local time the oldest buffered URL arrived. */
  readonly oldestAtMs: number;
  /** The destination's queued URLs in its last heartbeat load; undefined while unknown. */
  readonly peerQueuedUrls: number | undefined;
  /** True when this agent has nothing left to fetch: what it buffered now is all the others get. */
  readonly localIdle: boolean;
  /**
   * Batches in a row the destination acknowledged with no URL new to it (all seen before): its
   * shortage is not this agent's to cure, as at the end of a crawl, when every link is a duplicate.
   */
  readonly fruitlessBatches: number;
  /**
   * When the batch first held a URL of a host never sent to the destination, while the destination has
   * visit slots to spare (it would start that host at once: it may be the crawl's biggest, whose end
   * sets the crawl's); undefined otherwise.
   */
  readonly newHostAtMs?: number | undefined;
}

const DEFAULTS = { targetBatchUrls: 1000, maxDelayMs: 30_000, urgentDelayMs: 250, starvingQueuedUrls: 20 };

/**
 * When the batch for one destination goes. A batch is sent once it reaches the size target (it then
 * pays for itself); before that it waits, at most {@link FlushPolicyOptions.maxDelayMs}, so a
 * destination that gets few URLs gets them in few messages. It waits only
 * {@link FlushPolicyOptions.urgentDelayMs} when waiting would cost crawl time: the destination is short
 * of work (it would idle or run few hosts until the batch came), it has visit slots to spare and the
 * batch holds a host new to it (counted from that host's first URL), or this agent is idle (nothing
 * more will fill the batch, and termination waits for it). For a destination short of work, that wait
 * doubles with each batch in a row that brought it nothing new (up to the longest delay): at the end
 * of a crawl every busy agent would otherwise send every idle one a batch of duplicates four times a
 * second, while a destination that does get new URLs waits at most about as long again as it has
 * already gone without.
 */
export class FlushPolicy {
  readonly options: Readonly<Required<FlushPolicyOptions>>;

  constructor(options: FlushPolicyOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    const { maxDelayMs, urgentDelayMs } = this.options;
    for (const [name, value] of Object.entries(this.options)) {
      if (!Number.isSafeInteger(value) || value < (name === "targetBatchUrls" ? 1 : 0)) {
        throw new UbiError(ErrorCode.InvalidArgument, `${name} must be a non-negative integer, got ${value}`);
      }
    }
    if (urgentDelayMs > maxDelayMs) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `urgentDelayMs (${urgentDelayMs}) must not exceed maxDelayMs (${maxDelayMs})`,
      );
    }
  }

  /** True when the destination's last reported queue is short of work. */
  isStarving(peerQueuedUrls: number | undefined): boolean {
    return peerQueuedUrls !== undefined && peerQueuedUrls < this.options.starvingQueuedUrls;
  }

  /** Milliseconds from `nowMs` until the batch should be sent: 0 means now. */
  delayMs(batch: BatchState, nowMs: number): number {
    if (batch.urls === 0) return Number.POSITIVE_INFINITY;
    if (batch.urls >= this.options.targetBatchUrls) return 0;
    const { urgentDelayMs, maxDelayMs } = this.options;
    let waitMs = maxDelayMs;
    if (batch.localIdle) waitMs = urgentDelayMs;
    else if (this.isStarving(batch.peerQueuedUrls)) {
      waitMs = Math.min(maxDelayMs, urgentDelayMs * 2 ** Math.min(batch.fruitlessBatches, 30));
    }
    let dueAtMs = batch.oldestAtMs + waitMs;
    if (batch.newHostAtMs !== undefined) dueAtMs = Math.min(dueAtMs, batch.newHostAtMs + urgentDelayMs);
    return Math.max(0, dueAtMs - nowMs);
  }
}
