import { setMaxListeners } from "node:events";
import type { CrawlStats } from "../agent/crawl-stats.js";
import type { UrlExchange as UrlExchangeSink } from "../agent/link-router.js";
import { type Clock, sleep } from "../clock.js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import {
  type GroupCommit,
  outboxDoneOp,
  outboxEntries,
  outboxOp,
  type QueuedUrl,
  type StateStore,
  traitsOf,
  type UrlTraits,
} from "../storage/index.js";
import type { UrlBatch, UrlBatchAck } from "../transport/index.js";
import { hostKey, type UrlFingerprinter } from "../url/index.js";
import type { FlushPolicy } from "./flush-policy.js";
import { PeerOutbox, type PendingUrl } from "./peer-outbox.js";
import { UNACKED_PEER } from "./unacked-urls.js";
import { flushPolicyOf, resolveExchangeOptions, type UrlExchangeOptions } from "./url-exchange-options.js";

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
  readonly reroute: (url: string, depth: number, host: string, traits: UrlTraits) => void;
  /** Queues a URL recovered from the outbox of a dead peer that this agent now owns. */
  readonly requeue: (url: string, depth: number, host: string, traits: UrlTraits) => void;
  /** Called with the fingerprint of every URL handed to another agent. */
  readonly onSentAway: (fingerprint: bigint) => void;
  /** True when the URL with this fingerprint was handed to another agent before (durably noted). */
  readonly sentAwayBefore: (fingerprint: bigint) => boolean;
  /** Called when `peerId` acknowledged a batch (termination detection counts these). */
  readonly onDelivered: (peerId: string) => void;
  /** True when this agent has nothing left to fetch (its buffered links are then sent soon). */
  readonly localIdle?: () => boolean;
}

/**
 * Hands URLs of hosts owned by other agents to their owners: buffered per destination, sent in
 * batches (when the {@link FlushPolicy} says so, one batch in flight per peer), retried while the peer
 * lives and re-routed when it does not. Every URL handed to a peer is also remembered durably in the
 * outbox, so when that peer dies its URLs go to their new owners and the crawl still covers them.
 */
export class UrlExchange implements UrlExchangeSink {
  private readonly options: Required<UrlExchangeOptions>;
  private readonly policy: FlushPolicy;
  private readonly outboxes = new Map<string, PeerOutbox>();
  /**
   * By peer: URLs ever handed to it, and those of them settled (acknowledged, refused, or re-routed
   * because it left the view). One batch at a time leaves a peer's buffer, oldest first, so the URLs
   * handed before a moment are all settled once the second count reaches the first's then.
   */
  private readonly handedTo = new Map<string, number>();
  private readonly settledTo = new Map<string, number>();
  /**
   * By peer: its {@link handedTo} count right after the latest re-route that handed it URLs (a peer left
   * the view: what was buffered or on its way to it went to the new owners). {@link deliver} waits for
   * those where they went: settled for the peer that left, they are not yet with anyone.
   */
  private readonly reroutedUpTo = new Map<string, number>();
  /** Re-routes so far (see {@link reroutedUpTo}). */
  private reroutes = 0;
  private readonly abort = new AbortController();
  private batchSerial = 0;
  private pending = 0;
  private inFlight = 0;

  constructor(
    options: UrlExchangeOptions,
    private readonly deps: UrlExchangeDeps,
  ) {
    this.options = resolveExchangeOptions(options);
    // Every batch in flight listens on this signal.
    setMaxListeners(0, this.abort.signal);
    this.policy = flushPolicyOf(this.options);
  }

  /** URLs buffered or in flight, not yet acknowledged. */
  get pendingUrls(): number {
    return this.pending;
  }

  /** True when no URL waits to be sent or acknowledged. */
  get isIdle(): boolean {
    return this.pending === 0 && this.inFlight === 0;
  }

  /**
   * Buffers `url` of `host` for `owner` and remembers it durably (at the next commit); its `traits` (the
   * fetch attempts that failed here, a sitemap mark, a lastmod, a changefreq) go with it.
   */
  send(owner: string, url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    this.hand(owner, url, depth, host, this.deps.fingerprinter.fingerprint(url), traits);
  }

  /**
   * {@link send} for a link found on a page, unless this agent handed the URL away before: its owner
   * then has it already (a batch is acknowledged once durable), or gets it from this agent's outbox
   * when that owner dies. Most links to other agents' hosts repeat a URL already sent (each page is
   * linked from several), so this cuts the URLs exchanged (by 2/3 to 4/5 on the test web), the outbox
   * and the receiver's work; Cho and Garcia-Molina only drop the repeats within one batch.
   */
  offer(owner: string, url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    this.deps.stats.linksToOtherAgents++;
    const fingerprint = this.deps.fingerprinter.fingerprint(url);
    if (this.deps.sentAwayBefore(fingerprint)) return;
    this.hand(owner, url, depth, host, fingerprint, traits);
  }

  /**
   * Gives `url` of `host`, a URL this agent keeps in its own queue, to agent `keeper` to keep for it:
   * `keeper`, not its owner, passes it on to this agent and so holds it in its outbox, and re-sends it to
   * the host's next owner if this agent dies (see `Agent.takeLinksFoundOn`). Not marked as handed away:
   * it comes back here as a copy of a URL queued already, and is dropped.
   */
  entrust(keeper: string, url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    // Until the keeper has it, it is known here alone: see {@link deliver}.
    this.hand(keeper, url, depth, host, this.deps.fingerprinter.fingerprint(url), traits, false);
  }

  /**
   * Keeps `url` in this agent's outbox for `owner`, which has it already, without sending it: re-sent
   * to its host's next owner should `owner` crash (a `keepForOwners` batch from a leaving agent).
   * Durable at the next commit.
   */
  keep(owner: string, url: string, depth: number, traits: UrlTraits = {}): void {
    const entry: QueuedUrl = { url, depth, ...traitsOf(traits) };
    this.deps.committer.add(outboxOp(owner, this.deps.fingerprinter.fingerprint(url), entry));
  }

  /**
   * The agents some URL handed to is not settled with yet (buffered or on its way): a host's pages may
   * have given links to any of them, which a hand-over must see delivered too.
   */
  unsettledPeers(): string[] {
    return [...this.handedTo]
      .filter(([peer, handed]) => (this.settledTo.get(peer) ?? 0) < handed)
      .map(([peer]) => peer);
  }

  /**
   * Sends what is buffered for `peers` now, whatever the batch policy says, and resolves true once
   * every URL handed to them so far is settled (acknowledged, or refused) — a URL re-routed meanwhile
   * (its peer left the view) is waited for where it went — false after `waitMs`, or when the exchange stops. A host's hand-over waits on it before its done
   * set leaves: the URLs drained from the host's queue and the links its pages gave must be with
   * another agent first, or this agent's crash would lose them (its pages, done, are not fetched again).
   */
  async deliver(peers: Iterable<string>, waitMs: number): Promise<boolean> {
    const targets = new Map([...peers].map((peer) => [peer, this.handedTo.get(peer) ?? 0]));
    const deadline = this.deps.clock.now() + waitMs;
    let reroutesSeen = this.reroutes;
    for (;;) {
      if (this.reroutes !== reroutesSeen) {
        // A peer waited for left the view: its URLs count as settled there, and went to new owners.
        reroutesSeen = this.reroutes;
        for (const [peer, upTo] of this.reroutedUpTo) {
          if (peer !== this.deps.selfId && upTo > (targets.get(peer) ?? 0)) targets.set(peer, upTo);
        }
      }
      const open = [...targets].filter(([peer, handed]) => (this.settledTo.get(peer) ?? 0) < handed);
      if (open.length === 0) return true;
      if (this.abort.signal.aborted || this.deps.clock.now() >= deadline) return false;
      for (const [peer] of open) if (this.outboxes.has(peer)) this.flush(peer);
      await sleep(this.deps.clock, 20);
    }
  }

  private hand(
    owner: string,
    url: string,
    depth: number,
    host: string,
    fingerprint: bigint,
    traits: UrlTraits,
    sentAway = true,
  ): void {
    const entry: QueuedUrl = { url, depth, ...traitsOf(traits) };
    this.deps.committer.add(outboxOp(owner, fingerprint, entry));
    // Marked until a peer acknowledges it, so a restart after a SIGKILL sends it again.
    this.deps.committer.add(outboxOp(UNACKED_PEER, fingerprint, entry));
    if (sentAway) this.deps.onSentAway(fingerprint);
    const outbox = this.outboxOf(owner);
    outbox.push({ ...entry, host, fingerprint, atMs: this.deps.clock.now() });
    this.handedTo.set(owner, (this.handedTo.get(owner) ?? 0) + 1);
    this.pending++;
    this.schedule(owner, outbox);
  }

  /**
   * `peer`'s heartbeat load: how much work it has queued decides how long its batches wait (an idle or
   * nearly empty peer gets its URLs soon, and so does one with visit slots to spare when a batch holds
   * a host new to it). Also re-examines the batch for it. Kept for a peer nothing is buffered for yet:
   * a newcomer's first URLs must not wait a heartbeat to learn it has no work.
   */
  notePeerLoad(
    peer: string,
    load: { readonly idle: boolean; readonly queuedUrls: number; readonly spareHostSlots: number },
  ): void {
    const outbox = this.outboxOf(peer);
    outbox.noteLoad(load);
    this.schedule(peer, outbox);
  }

  /** Re-examines every buffered batch (e.g. this agent just became idle). */
  reconsider(): void {
    for (const [peer, outbox] of this.outboxes) this.schedule(peer, outbox);
  }

  /**
   * After a view change: URLs buffered for agents no longer alive go to their new owners. A batch on
   * its way to one is not waited for (a call lost in a partition would wait out its 10 s deadline): it
   * goes to the new owners too.
   */
  onViewChange(): void {
    for (const [peer, outbox] of this.outboxes) {
      if (this.deps.isAlive(peer)) continue;
      if (outbox.sending)
        outbox.abortCall(new UbiError(ErrorCode.PeerUnreachable, `agent ${peer} left the view`));
      else this.rerouteBuffer(peer, outbox);
    }
  }

  /**
   * `peer` crashed: every URL ever handed to it goes to its new owner (this agent included), so the
   * queue it lost is rebuilt. Its outbox entries are then forgotten.
   */
  async redistribute(peer: string): Promise<number> {
    let count = 0;
    for await (const { fingerprint, entry } of outboxEntries(this.deps.store, peer)) {
      this.deps.committer.add(outboxDoneOp(peer, fingerprint));
      // Queued here or handed off again (marked again then) in this same commit.
      this.deps.committer.add(outboxDoneOp(UNACKED_PEER, fingerprint));
      this.deps.requeue(entry.url, entry.depth, hostKey(entry.url), traitsOf(entry));
      count++;
    }
    await this.deps.committer.commit();
    return count;
  }

  /**
   * `peer` left gracefully: it handed what it held, with each host, to the host's next owner
   * (`ownerOf`, under the view without it). Its outbox entries move to that owner's, unsent (this
   * agent's own are dropped: it holds them), so a later crash of the next owner re-sends them as any
   * URL handed to it; left under `peer`, they would never be re-sent, and a crash of the agent that
   * took the leaver's hosts would lose every URL this agent gave the leaver. Resolves with the count.
   */
  async rehome(peer: string, ownerOf: (url: string, host: string) => string): Promise<number> {
    let count = 0;
    for await (const { fingerprint, entry } of outboxEntries(this.deps.store, peer)) {
      this.deps.committer.add(outboxDoneOp(peer, fingerprint));
      const owner = ownerOf(entry.url, hostKey(entry.url));
      if (owner !== this.deps.selfId) this.deps.committer.add(outboxOp(owner, fingerprint, entry));
      count++;
    }
    await this.deps.committer.commit();
    return count;
  }

  /** Stops sending; buffered URLs stay in the durable outbox. */
  stop(): void {
    this.abort.abort(new UbiError(ErrorCode.PeerUnreachable, "exchange stopped"));
    for (const outbox of this.outboxes.values()) outbox.clearTimer();
  }

  /**
   * Sends everything buffered now (e.g. before a graceful leave) and waits until acknowledged, or until
   * `signal` aborts (the batches on the way are then left to end by themselves).
   */
  async drain(signal?: AbortSignal): Promise<void> {
    for (;;) {
      // Again each round: URLs buffered behind a batch on its way (or routed since) go as soon as it is
      // answered, not when the flush policy would have sent them (up to its longest delay).
      for (const peer of this.outboxes.keys()) this.flush(peer);
      if (this.isIdle || this.abort.signal.aborted || signal?.aborted) return;
      await sleep(this.deps.clock, 20);
    }
  }

  private flush(peer: string): void {
    const outbox = this.outboxOf(peer);
    outbox.clearTimer();
    if (outbox.sending || outbox.size === 0 || this.abort.signal.aborted) return;
    outbox.sending = true;
    const urls = outbox.takeBatch(this.options.maxBatchUrls);
    this.inFlight++;
    this.sendBatch(peer, outbox, urls)
      .catch(() => {})
      .finally(() => {
        this.inFlight--;
        outbox.sending = false;
        this.schedule(peer, outbox);
      });
  }

  /** Sends the batch for `peer` now if the policy says so, or sets (or brings forward) its timer. */
  private schedule(peer: string, outbox: PeerOutbox): void {
    if (outbox.sending || this.abort.signal.aborted) return;
    const oldestAtMs = outbox.oldestAtMs;
    if (oldestAtMs === undefined) return;
    const now = this.deps.clock.now();
    if (outbox.size >= this.options.maxBatchUrls) {
      this.flush(peer);
      return;
    }
    const delayMs = this.policy.delayMs(outbox.batchState(oldestAtMs, this.deps.localIdle?.() ?? false), now);
    if (delayMs === 0 && outbox.size >= this.policy.options.targetBatchUrls) {
      this.flush(peer);
      return;
    }
    outbox.sendIn(now, delayMs, () => this.flush(peer));
  }

  private async sendBatch(peer: string, outbox: PeerOutbox, urls: PendingUrl[]): Promise<void> {
    const batch: UrlBatch = {
      batchId: `${this.deps.selfId}.${this.deps.incarnation}.${++this.batchSerial}`,
      fromId: this.deps.selfId,
      urls: urls.map((item) => ({ url: item.url, depth: item.depth, ...traitsOf(item) })),
    };
    let delayMs = this.options.retryMinMs;
    let durable = false;
    while (!this.abort.signal.aborted) {
      if (!this.deps.isAlive(peer)) {
        this.settle(peer, urls.length);
        this.reroute(urls);
        return;
      }
      try {
        // The outbox records (and the pages that found these links) must be durable before the peer
        // sees them; a failed write is retried like a failed send, so no URL is dropped.
        if (!durable) await this.deps.committer.commit();
        durable = true;
        const ack = await outbox.attempt(this.abort.signal, (signal) =>
          this.deps.submit(peer, batch, signal),
        );
        outbox.noteAck(ack);
        this.acknowledged(urls);
        this.settle(peer, urls.length);
        const traffic = this.deps.stats.peer(peer);
        traffic.urlsSent += urls.length;
        traffic.batchesSent++;
        this.deps.onDelivered(peer);
        return;
      } catch (error) {
        if (durable && isUbiError(error, ErrorCode.BadMessage)) {
          // The peer refuses these URLs for good (its normalizer or limits say no): retrying would block
          // its outbox forever. They are counted and dropped.
          this.settle(peer, urls.length);
          this.deps.stats.recordError("batch_refused");
          return;
        }
        // A peer gone from the view is not waited for: its URLs go to their new owners at once.
        if (!this.deps.isAlive(peer)) continue;
        await outbox
          .attempt(this.abort.signal, (signal) => sleep(this.deps.clock, delayMs, signal))
          .catch(() => {});
        delayMs = Math.min(delayMs * 2, this.options.retryMaxMs);
      }
    }
  }

  /** `count` URLs handed to `peer` are settled: no longer pending (see {@link deliver}). */
  private settle(peer: string, count: number): void {
    this.pending -= count;
    this.settledTo.set(peer, (this.settledTo.get(peer) ?? 0) + count);
  }

  /** The peer holds `urls` durably now: a restart need not send them again. */
  private acknowledged(urls: readonly PendingUrl[]): void {
    for (const { fingerprint } of urls) {
      this.deps.committer.add(outboxDoneOp(UNACKED_PEER, fingerprint));
    }
    // Written now, not at some later commit: pending ops keep the agent from looking idle.
    this.deps.committer.commit().catch(() => {});
  }

  private rerouteBuffer(peer: string, outbox: PeerOutbox): void {
    const urls = outbox.takeAll();
    outbox.clearTimer();
    this.settle(peer, urls.length);
    this.outboxes.delete(peer);
    this.reroute(urls);
  }

  /** Sends `urls`, handed to a peer that left the view, to their owners now (see {@link reroutedUpTo}). */
  private reroute(urls: readonly PendingUrl[]): void {
    const before = new Map(this.handedTo);
    for (const item of urls) this.deps.reroute(item.url, item.depth, item.host, traitsOf(item));
    for (const [peer, handed] of this.handedTo) {
      if (handed !== before.get(peer)) this.reroutedUpTo.set(peer, handed);
    }
    this.reroutes++;
  }

  private outboxOf(peer: string): PeerOutbox {
    let outbox = this.outboxes.get(peer);
    if (!outbox) {
      outbox = new PeerOutbox(this.deps.clock);
      this.outboxes.set(peer, outbox);
    }
    return outbox;
  }
}
