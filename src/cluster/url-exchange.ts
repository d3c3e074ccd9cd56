import { setMaxListeners } from "node:events";
import type { CrawlStats } from "../agent/crawl-stats.js";
import type { UrlExchange as UrlExchangeSink } from "../agent/link-router.js";
import { type Clock, sleep, type TimerHandle } from "../clock.js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import type { GroupCommit, QueuedUrl, StateStore } from "../storage/index.js";
import type { UrlBatch, UrlBatchAck } from "../transport/index.js";
import { hostKey, type UrlFingerprinter } from "../url/index.js";

/** Options of a {@link UrlExchange}. */
export interface UrlExchangeOptions {
  /** URLs per batch at most; a full buffer is sent at once. @default 1000 */
  readonly maxBatchUrls?: number;
  /** Longest a URL waits in a buffer before its batch is sent. @default 250 */
  readonly flushDelayMs?: number;
  /** First retry delay of a failed batch; doubles up to `retryMaxMs`. @default 200 */
  readonly retryMinMs?: number;
  /** @default 5000 */
  readonly retryMaxMs?: number;
}

/** What a {@link UrlExchange} needs. */
export interface UrlExchangeDeps {
  readonly selfId: string;
  /** Makes batch ids unique across restarts of this agent. */
  readonly incarnation: number;
  readonly clock: Clock;
  readonly stats: CrawlStats;
  readonly committer: GroupCommit;
  readonly store: StateStore;
  readonly fingerprinter: UrlFingerprinter;
  /** Sends one batch to a peer and resolves with its acknowledgement. */
  readonly submit: (peerId: string, batch: UrlBatch, signal: AbortSignal) => Promise<UrlBatchAck>;
  /** True while `peerId` is alive in this agent's view. */
  readonly isAlive: (peerId: string) => boolean;
  /** Sends a URL back through the router under the current view (its owner may have changed). */
  readonly reroute: (url: string, depth: number, host: string) => void;
  /** Queues a URL recovered from the outbox of a dead peer that this agent now owns. */
  readonly requeue: (url: string, depth: number, host: string) => void;
  /** Called with the fingerprint of every URL handed to another agent. */
  readonly onSentAway: (fingerprint: bigint) => void;
  /** Called when `peerId` acknowledged a batch (termination detection counts these). */
  readonly onDelivered: (peerId: string) => void;
}

interface Pending extends QueuedUrl {
  readonly host: string;
}

interface PeerOutbox {
  buffer: Pending[];
  timer: TimerHandle | undefined;
  sending: boolean;
}

const DEFAULTS = { maxBatchUrls: 1000, flushDelayMs: 250, retryMinMs: 200, retryMaxMs: 5000 } as const;

/**
 * Hands URLs of hosts owned by other agents to their owners: buffered per destination, sent in
 * batches (by size or after a short delay, one batch in flight per peer), retried while the peer
 * lives and re-routed when it does not. Every URL handed to a peer is also remembered durably in the
 * outbox, so when that peer dies its URLs go to their new owners and the crawl still covers them.
 */
export class UrlExchange implements UrlExchangeSink {
  private readonly options: Required<UrlExchangeOptions>;
  private readonly outboxes = new Map<string, PeerOutbox>();
  private readonly abort = new AbortController();
  private batchSerial = 0;
  private pending = 0;
  private inFlight = 0;

  constructor(
    options: UrlExchangeOptions,
    private readonly deps: UrlExchangeDeps,
  ) {
    this.options = { ...DEFAULTS, ...options };
    // Every batch in flight listens on this signal.
    setMaxListeners(0, this.abort.signal);
    for (const [name, value] of Object.entries(this.options)) {
      if (!Number.isInteger(value) || value < (name === "flushDelayMs" ? 0 : 1)) {
        throw new UbiError(ErrorCode.InvalidArgument, `${name} must be a positive integer, got ${value}`);
      }
    }
  }

  /** URLs buffered or in flight, not yet acknowledged. */
  get pendingUrls(): number {
    return this.pending;
  }

  /** True when no URL waits to be sent or acknowledged. */
  get isIdle(): boolean {
    return this.pending === 0 && this.inFlight === 0;
  }

  /** Buffers `url` of `host` for `owner` and remembers it durably (at the next commit). */
  send(owner: string, url: string, depth: number, host: string): void {
    const fingerprint = this.deps.fingerprinter.fingerprint(url);
    this.deps.committer.add({ kind: "outbox", peer: owner, fingerprint, entry: { url, depth } });
    this.deps.onSentAway(fingerprint);
    const outbox = this.outboxOf(owner);
    outbox.buffer.push({ url, depth, host });
    this.pending++;
    if (outbox.buffer.length >= this.options.maxBatchUrls) this.flush(owner);
    else if (outbox.timer === undefined && !outbox.sending) {
      outbox.timer = this.deps.clock.setTimeout(() => this.flush(owner), this.options.flushDelayMs);
    }
  }

  /** After a view change: URLs buffered for agents no longer alive go to their new owners. */
  onViewChange(): void {
    for (const [peer, outbox] of this.outboxes) {
      if (this.deps.isAlive(peer) || outbox.sending) continue;
      this.rerouteBuffer(peer, outbox);
    }
  }

  /**
   * `peer` crashed: every URL ever handed to it goes to its new owner (this agent included), so the
   * queue it lost is rebuilt. Its outbox entries are then forgotten.
   */
  async redistribute(peer: string): Promise<number> {
    let count = 0;
    for await (const { fingerprint, entry } of this.deps.store.outboxEntries(peer)) {
      this.deps.committer.add({ kind: "outbox-done", peer, fingerprint });
      this.deps.requeue(entry.url, entry.depth, hostKey(entry.url));
      count++;
    }
    await this.deps.committer.commit();
    return count;
  }

  /** Stops sending; buffered URLs stay in the durable outbox. */
  stop(): void {
    this.abort.abort(new UbiError(ErrorCode.PeerUnreachable, "exchange stopped"));
    for (const outbox of this.outboxes.values()) {
      if (outbox.timer !== undefined) this.deps.clock.clearTimeout(outbox.timer);
      outbox.timer = undefined;
    }
  }

  /** Sends everything buffered now (e.g. before a graceful leave) and waits until acknowledged. */
  async drain(): Promise<void> {
    for (const peer of this.outboxes.keys()) this.flush(peer);
    while (!this.isIdle && !this.abort.signal.aborted) await sleep(this.deps.clock, 20);
  }

  private flush(peer: string): void {
    const outbox = this.outboxOf(peer);
    if (outbox.timer !== undefined) this.deps.clock.clearTimeout(outbox.timer);
    outbox.timer = undefined;
    if (outbox.sending || outbox.buffer.length === 0 || this.abort.signal.aborted) return;
    outbox.sending = true;
    const urls = outbox.buffer.splice(0, batchLength(outbox.buffer, this.options.maxBatchUrls));
    this.inFlight++;
    this.sendBatch(peer, urls)
      .catch(() => {})
      .finally(() => {
        this.inFlight--;
        outbox.sending = false;
        if (outbox.buffer.length >= this.options.maxBatchUrls) this.flush(peer);
        else if (outbox.buffer.length > 0 && !this.abort.signal.aborted) {
          outbox.timer = this.deps.clock.setTimeout(() => this.flush(peer), this.options.flushDelayMs);
        }
      });
  }

  private async sendBatch(peer: string, urls: Pending[]): Promise<void> {
    const batch: UrlBatch = {
      batchId: `${this.deps.selfId}.${this.deps.incarnation}.${++this.batchSerial}`,
      fromId: this.deps.selfId,
      urls: urls.map(({ url, depth }) => ({ url, depth })),
    };
    let delayMs = this.options.retryMinMs;
    let durable = false;
    while (!this.abort.signal.aborted) {
      if (!this.deps.isAlive(peer)) {
        this.pending -= urls.length;
        for (const item of urls) this.deps.reroute(item.url, item.depth, item.host);
        return;
      }
      try {
        // The outbox records (and the pages that found these links) must be durable before the peer
        // sees them; a failed write is retried like a failed send, so no URL is dropped.
        if (!durable) await this.deps.committer.commit();
        durable = true;
        await this.deps.submit(peer, batch, this.abort.signal);
        this.pending -= urls.length;
        const traffic = this.deps.stats.peer(peer);
        traffic.urlsSent += urls.length;
        traffic.batchesSent++;
        this.deps.onDelivered(peer);
        return;
      } catch (error) {
        if (durable && isUbiError(error, ErrorCode.BadMessage)) {
          // The peer refuses these URLs for good (its normalizer or limits say no): retrying would block
          // its outbox forever. They are counted and dropped.
          this.pending -= urls.length;
          this.deps.stats.recordError("batch_refused");
          return;
        }
        await sleep(this.deps.clock, delayMs, this.abort.signal).catch(() => {});
        delayMs = Math.min(delayMs * 2, this.options.retryMaxMs);
      }
    }
  }

  private rerouteBuffer(peer: string, outbox: PeerOutbox): void {
    const urls = outbox.buffer;
    outbox.buffer = [];
    if (outbox.timer !== undefined) this.deps.clock.clearTimeout(outbox.timer);
    outbox.timer = undefined;
    this.pending -= urls.length;
    this.outboxes.delete(peer);
    for (const item of urls) this.deps.reroute(item.url, item.depth, item.host);
  }

  private outboxOf(peer: string): PeerOutbox {
    let outbox = this.outboxes.get(peer);
    if (!outbox) {
      outbox = { buffer: [], timer: undefined, sending: false };
      this.outboxes.set(peer, outbox);
    }
    return outbox;
  }
}

/** Characters of URLs per batch at most, well under the 4 MiB message limit of the transport. */
const MAX_BATCH_CHARS = 2 * 1024 * 1024;

/** How many of the buffered URLs go in the next batch: at most `maxUrls` and {@link MAX_BATCH_CHARS}. */
function batchLength(buffer: readonly Pending[], maxUrls: number): number {
  let chars = 0;
  let count = 0;
  for (const item of buffer) {
    if (count >= maxUrls || (count > 0 && chars + item.url.length > MAX_BATCH_CHARS)) break;
    chars += item.url.length;
    count++;
  }
  return count;
}
