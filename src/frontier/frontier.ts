import { ErrorCode, UbiError } from "../errors.js";
import {
  asideBeyondOp,
  asideCounts,
  asideDoneOp,
  asideOf,
  asideOp,
  dequeueOp,
  enqueueOp,
  fetchedOf,
  fetchedOps,
  forEachSeen,
  type GroupCommit,
  type HostRecord,
  hasFetched,
  hostRecordOp,
  hostRecords,
  outboxEntries,
  type QueuedUrl,
  readQueue,
  type StateStore,
  type StoredQueueEntry,
  scanQueues,
  seenOp,
  traitsOf,
  type UrlTraits,
  unfetchedOps,
} from "../storage/index.js";
import type { UrlFingerprinter } from "../url/index.js";
import { HostQueue } from "./host-queue.js";
import { HostTable } from "./host-table.js";
import { SeenSet } from "./seen-set.js";

/** Options of a {@link Frontier}. */
export interface FrontierOptions {
  /**
   * Entries of a host's queue kept in memory at most; the rest stay on disk until needed.
   * @default 256
   */
  queueWindow?: number;
  /**
   * Hosts whose window is kept in memory at most; past it the least recently loaded idle windows are
   * dropped (their entries stay on disk), so memory does not grow with the number of hosts.
   * @default 1024
   */
  maxWindowedHosts?: number;
  /**
   * URLs of one host kept aside at most while it is blacklisted (see {@link Frontier.setAside}); those
   * beyond are counted, not kept.
   * @default {@link DEFAULT_MAX_ASIDE_PER_HOST}
   */
  maxAsidePerHost?: number;
}

/** @default of {@link FrontierOptions.maxAsidePerHost}. */
export const DEFAULT_MAX_ASIDE_PER_HOST = 10_000;

/** What became of a blacklisted host's URL dropped from its queue ({@link Frontier.setAside}). */
export type AsideOutcome = "kept" | "beyond-cap";

/** URLs of one host kept aside while it was blacklisted, and those dropped beyond the cap. */
export interface AsideCount {
  readonly kept: number;
  readonly beyond: number;
}

/** What {@link Frontier.restoreAside} did with one host's kept-aside URLs. */
export interface AsideRestore {
  /** URLs handed to `place` (queued again here, or sent to their owner: the caller's choice). */
  readonly placed: number;
  /** URLs kept aside that were done meanwhile (a previous owner's hand-over, a forced seed). */
  readonly doneMeanwhile: number;
  /** URLs dropped while blacklisted beyond the cap: not kept, cannot be restored. */
  readonly beyondCap: number;
}

/** How a URL given with `ctl add-seeds --force` ended ({@link Frontier.forceAdd}). */
export type ForcedOutcome = "queued" | "queued-again" | "done-before";

/** What a {@link Frontier} needs. */
export interface FrontierDeps {
  readonly store: StateStore;
  /** The agent's group commit, shared with the other writers of the store. */
  readonly committer: GroupCommit;
  readonly fingerprinter: UrlFingerprinter;
  /** Called when a host goes from no waiting URL to some. */
  readonly onHostReady: (host: string) => void;
  /** Called when a host's waiting URLs reach a power of two (2, 4, 8, …): the scheduler's classes. */
  readonly onQueueGrew?: (host: string) => void;
  /** Called with each URL that leaves its queue: completed (done or not), or drained to another agent. */
  readonly onSettled?: (url: string) => void;
}

/** How a taken URL ended, for {@link Frontier.complete}. */
export interface Completion {
  /**
   * The URL is done: a request reached the server (any status), or it failed for good. It is then
   * never fetched again, here or by a later owner of its host (hand-overs carry the done set).
   */
  readonly done: boolean;
  /** The fetch counts against the host's page limit. */
  readonly counted: boolean;
}

/** What another agent hands over of a host (see {@link Frontier.adopt}). */
export interface AdoptedHost {
  /** Fingerprints of the host's URLs it fetched or gave up on. */
  readonly done: readonly bigint[];
  /** Pages it fetched of the host (for the per-host page limit). */
  readonly pagesFetched: number;
  /** Why the host was given up, if it was. */
  readonly abandoned?: string;
}

/**
 * A URL taken and not yet completed: `done` settles when every copy of it taken is completed or put
 * back (a URL handed away and back can be queued and taken again while its first copy is in flight).
 */
interface Flight {
  readonly host: string;
  readonly done: Promise<void>;
  readonly resolve: () => void;
  copies: number;
}

/** @default values of {@link FrontierOptions}. */
export const DEFAULT_QUEUE_WINDOW = 256;
/** @default of {@link FrontierOptions.maxWindowedHosts}: 4x the scheduler's default active hosts. */
export const DEFAULT_MAX_WINDOWED_HOSTS = 1024;

/**
 * The URLs this agent still has to fetch: the seen set (every URL ever queued here, as 64-bit
 * fingerprints), one durable FIFO per host, and the record of what was fetched. Changes are
 * accumulated and written by group commit; a URL leaves its queue only in the same atomic batch that
 * records its fetch and queues its links, so after a SIGKILL nothing queued is lost and nothing
 * completed is fetched again.
 */
export class Frontier {
  /** Idle hosts are packed in typed columns, so memory does not grow by an object per host. */
  private readonly hosts = new HostTable();
  private readonly dirtyHosts = new Set<string>();
  private readonly committer: GroupCommit;
  private readonly queueWindow: number;
  private readonly maxWindowedHosts: number;
  /** Hosts with a window in memory, least recently loaded first. */
  private readonly windowed = new Map<string, HostQueue>();
  /** The drains of hosts' queues under way (see {@link drainHost}). */
  private readonly drains = new Map<string, Promise<QueuedUrl[]>>();
  /** Fingerprints of URLs handed to other agents (the outbox), kept so they can come back. */
  private readonly sentAway = new SeenSet();
  /**
   * URLs handed away that came back and were queued again since (this life): each comes back once,
   * however many agents send it. Handed away again, it may come back again.
   */
  private readonly returned = new Set<bigint>();
  /** URLs taken and not yet completed, each with a promise settled when every copy is. */
  private readonly flights = new Map<string, Flight>();
  /** The entries taken and not yet completed or put back, by host and sequence number. */
  private readonly takenEntries = new Set<string>();
  private waitingTotal = 0;
  private inFlightTotal = 0;
  /** URLs of one host kept aside at most while it is blacklisted (see {@link setAside}). */
  readonly maxAsidePerHost: number;
  /** Per host, URLs kept aside and dropped beyond the cap while blacklisted (mirrors the store). */
  private readonly asideCounts = new Map<string, { kept: number; beyond: number }>();
  /** Hosts whose kept-aside URLs are being restored now (one restore a host at a time). */
  private readonly restoring = new Set<string>();
  /** Hosts set aside more URLs while their restore was running (blacklisted again meanwhile). */
  private readonly asideDuringRestore = new Set<string>();

  private constructor(
    options: FrontierOptions,
    private readonly deps: FrontierDeps,
    /** Fingerprints of every URL ever queued by this agent. */
    readonly seen: SeenSet,
  ) {
    this.queueWindow = options.queueWindow ?? DEFAULT_QUEUE_WINDOW;
    if (!Number.isInteger(this.queueWindow) || this.queueWindow < 1) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `queueWindow must be a positive integer, got ${this.queueWindow}`,
      );
    }
    this.maxWindowedHosts = options.maxWindowedHosts ?? DEFAULT_MAX_WINDOWED_HOSTS;
    if (!Number.isInteger(this.maxWindowedHosts) || this.maxWindowedHosts < 1) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `maxWindowedHosts must be a positive integer, got ${this.maxWindowedHosts}`,
      );
    }
    this.maxAsidePerHost = options.maxAsidePerHost ?? DEFAULT_MAX_ASIDE_PER_HOST;
    if (!Number.isInteger(this.maxAsidePerHost) || this.maxAsidePerHost < 0) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `maxAsidePerHost must be a whole number, got ${this.maxAsidePerHost}`,
      );
    }
    this.committer = deps.committer;
    this.committer.beforeWrite((ops) => {
      for (const host of this.dirtyHosts) {
        const queue = this.hosts.get(host);
        if (queue) {
          // Whether its queue may hold done URLs survives a restart with the record.
          const record: HostRecord = queue.mayRepeat
            ? { ...queue.record, recheck: true }
            : { ...queue.record };
          ops.push(hostRecordOp(host, record));
        }
      }
      this.dirtyHosts.clear();
    });
  }

  /** Loads the frontier from the store: seen fingerprints, host records and queue heads. */
  static async open(options: FrontierOptions, deps: FrontierDeps): Promise<Frontier> {
    const seen = new SeenSet();
    await forEachSeen(deps.store, (fingerprint) => seen.add(fingerprint));
    const frontier = new Frontier(options, deps, seen);
    for await (const { fingerprint } of outboxEntries(deps.store)) frontier.sentAway.add(fingerprint);
    const queues = await scanQueues(deps.store);
    for await (const [host, record] of hostRecords(deps.store)) {
      const queued = queues.get(host);
      const { recheck, ...kept } = record;
      const queue = new HostQueue(host, kept, queued?.count ?? 0, queued?.headSeq ?? record.nextSeq);
      queue.mayRepeat = recheck === true;
      frontier.hosts.set(host, queue);
      queues.delete(host);
    }
    // Queue entries whose host record was lost cannot happen (same batch), but stay safe.
    for (const [host, queued] of queues) {
      const nextSeq = queued.headSeq + queued.count;
      frontier.hosts.set(host, new HostQueue(host, { nextSeq, fetched: 0 }, queued.count, queued.headSeq));
    }
    frontier.waitingTotal = frontier.hosts.totalWaiting();
    frontier.hosts.sweep();
    for (const [host, count] of await asideCounts(deps.store)) frontier.asideCounts.set(host, count);
    return frontier;
  }

  /** Hosts that have URLs waiting, for the scheduler after a restart. */
  hostsWithWork(): string[] {
    return this.hosts.hostsWithWork();
  }

  /** Every host this agent has a record of. */
  knownHosts(): IterableIterator<string> {
    return this.hosts.keys();
  }

  /** URLs queued and not yet taken. */
  get waitingUrls(): number {
    return this.waitingTotal;
  }

  /** URLs taken and not yet completed. */
  get inFlightUrls(): number {
    return this.inFlightTotal;
  }

  /** True when nothing is waiting, in flight, or still to be written. */
  get isEmpty(): boolean {
    return this.waitingTotal === 0 && this.inFlightTotal === 0 && this.committer.pendingOps === 0;
  }

  /** The durable record of `host` (created empty when unknown). */
  record(host: string): HostRecord {
    return this.queueOf(host).record;
  }

  /** The durable record of `host`, or undefined when this agent has none (nothing is created). */
  recordIfKnown(host: string): HostRecord | undefined {
    return this.hosts.get(host)?.record;
  }

  /** Marks `host`'s record changed, so the next commit writes it. */
  touch(host: string): void {
    this.dirtyHosts.add(host);
  }

  /** Waiting URLs of `host`. */
  waitingOf(host: string): number {
    return this.hosts.get(host)?.waiting ?? 0;
  }

  /**
   * Queues `url` (canonical, of `host`) unless it was seen before, with its `traits` (failed attempts,
   * a sitemap mark, a lastmod and a changefreq); returns true when queued. Durable at the next {@link commit}.
   */
  add(url: string, depth: number, host: string, traits: UrlTraits = {}): boolean {
    const fingerprint = this.deps.fingerprinter.fingerprint(url);
    if (this.seen.add(fingerprint)) {
      this.committer.add(seenOp(fingerprint));
    } else if (this.sentAway.has(fingerprint) && !this.returned.has(fingerprint)) {
      // Seen here, but handed to another agent since (its host changed owner, or its owner died): it
      // comes back now that this agent owns the host again, and must not be lost. Queued once, however
      // many agents send it; a copy done meanwhile is skipped at take time (the done check).
      this.returned.add(fingerprint);
      this.markRecheck(host);
    } else {
      return false;
    }
    this.enqueue(host, { url, depth, ...traitsOf(traits) });
    return true;
  }

  /**
   * Queues `url` of `host` even when it was seen before (`ctl add-seeds --force`), unless it is done
   * (fetched, or failed for good): nothing is fetched twice. A URL seen before may be queued already,
   * or in flight: the host's queue is then checked against the done set before each fetch, so only one
   * copy is fetched. Durable at the next {@link commit}.
   */
  async forceAdd(url: string, depth: number, host: string): Promise<ForcedOutcome> {
    // Pages completed and not yet written would not be found done: write them first.
    await this.committer.commit();
    if ((await this.wasFetched([url]))[0]) return "done-before";
    return this.requeue(url, depth, host, {}) ? "queued" : "queued-again";
  }

  /**
   * Queues `url` of `host`, seen or not (a URL kept aside, a forced seed): the caller knows it is not
   * done. Returns true when it was not seen before. A URL seen before may have another copy queued or
   * in flight: the host's queue is then checked against the done set before each fetch.
   */
  requeue(url: string, depth: number, host: string, traits: UrlTraits = {}): boolean {
    const fingerprint = this.deps.fingerprinter.fingerprint(url);
    const unseen = this.seen.add(fingerprint);
    if (unseen) this.committer.add(seenOp(fingerprint));
    else {
      const queue = this.queueOf(host);
      if (queue.hasWork || queue.inFlight > 0) this.markRecheck(host);
    }
    this.enqueue(host, { url, depth, ...traitsOf(traits) });
    return unseen;
  }

  /**
   * Makes done `url` of `host` not done and queues it again, counted off the host's pages: its WARC
   * record is lost (see `src/agent/lost-pages.ts`). Durable at the next {@link commit}. Before the
   * agent runs only: while it runs, {@link unmarkFetched}, commit, then {@link requeue}.
   */
  fetchAgain(url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    this.unmarkFetched(url, host);
    this.requeue(url, depth, host, traits);
  }

  /**
   * Makes done `url` of `host` not done, counted off the host's pages, durably at the next
   * {@link commit}. A running agent commits that before it queues the URL again: a queue that may hold
   * done URLs checks each against the state before its fetch, and would drop it while the state still
   * says done.
   */
  unmarkFetched(url: string, host: string): void {
    this.committer.add(...unfetchedOps(host, this.deps.fingerprinter.fingerprint(url)));
    const queue = this.queueOf(host);
    if (queue.record.fetched > 0) {
      queue.record.fetched--;
      this.dirtyHosts.add(host);
    }
  }

  /**
   * Completes a taken entry of a blacklisted `host` without fetching it, and keeps its URL aside,
   * durably in the same batch (up to the per-host cap; beyond it the URL is only counted), so a removal
   * from the blacklist can queue it again ({@link restoreAside}).
   */
  setAside(host: string, entry: StoredQueueEntry): AsideOutcome {
    const fingerprint = this.deps.fingerprinter.fingerprint(entry.url);
    let count = this.asideCounts.get(host);
    if (count === undefined) {
      count = { kept: 0, beyond: 0 };
      this.asideCounts.set(host, count);
    }
    if (this.restoring.has(host)) this.asideDuringRestore.add(host);
    let outcome: AsideOutcome;
    if (count.kept < this.maxAsidePerHost) {
      // Keyed by fingerprint: a second copy of the URL (queued twice) is kept once, counted once.
      this.committer.add(asideOp(host, fingerprint, toQueuedUrl(entry)));
      count.kept++;
      outcome = "kept";
    } else {
      count.beyond++;
      this.committer.add(asideBeyondOp(host, count.beyond));
      outcome = "beyond-cap";
    }
    this.complete(host, entry, { done: false, counted: false });
    return outcome;
  }

  /** Hosts with URLs kept aside, or dropped beyond the cap, while blacklisted. */
  asideHosts(): string[] {
    return [...this.asideCounts.keys()];
  }

  /** URLs of `host` kept aside, and dropped beyond the cap, while it was blacklisted. */
  asideOf(host: string): AsideCount {
    const count = this.asideCounts.get(host);
    return count === undefined ? { kept: 0, beyond: 0 } : { ...count };
  }

  /**
   * Gives back `host`'s URLs kept aside while it was blacklisted: `place` gets each one not done
   * meanwhile, synchronously as its aside entry's removal is recorded, so one batch writes both (the
   * URL is queued again or sent to its owner by `place`, never lost and never both). The count of URLs
   * beyond the cap is reported and forgotten. Durable at the next {@link commit}; undefined when a
   * restore of `host` is running already.
   */
  async restoreAside(host: string, place: (entry: QueuedUrl) => void): Promise<AsideRestore | undefined> {
    if (this.restoring.has(host) || !this.asideCounts.has(host)) return undefined;
    this.restoring.add(host);
    try {
      // Aside entries still in the commit buffer become readable, and done marks too.
      await this.committer.commit();
      const kept = await asideOf(this.deps.store, host);
      const done = await hasFetched(
        this.deps.store,
        kept.map(({ fingerprint }) => fingerprint),
      );
      const beyondCap = this.asideCounts.get(host)?.beyond ?? 0;
      let placed = 0;
      for (const [i, { fingerprint, entry }] of kept.entries()) {
        this.committer.add(asideDoneOp(host, fingerprint));
        if (done[i]) continue;
        place(entry);
        placed++;
      }
      const count = this.asideCounts.get(host);
      if (count !== undefined && this.asideDuringRestore.has(host)) {
        // Blacklisted again while restoring: what was set aside since stays for the next removal.
        count.kept = Math.max(0, count.kept - kept.length);
        count.beyond -= beyondCap;
        this.committer.add(asideBeyondOp(host, count.beyond));
      } else {
        if (beyondCap > 0) this.committer.add(asideBeyondOp(host, 0));
        this.asideCounts.delete(host);
      }
      return { placed, doneMeanwhile: kept.length - placed, beyondCap };
    } finally {
      this.restoring.delete(host);
      this.asideDuringRestore.delete(host);
    }
  }

  /** Marks `host`'s queue as possibly holding done URLs: each is checked before its fetch, durably. */
  private markRecheck(host: string): void {
    const queue = this.queueOf(host);
    if (queue.mayRepeat) return;
    queue.mayRepeat = true;
    this.dirtyHosts.add(host);
  }

  /** Records that `url` was handed to another agent (see {@link add}). */
  markSentAway(fingerprint: bigint): void {
    this.sentAway.add(fingerprint);
    if (this.returned.size > 0) this.returned.delete(fingerprint);
  }

  /** True when the URL with this fingerprint was handed to another agent (this life, or a noted one). */
  wasSentAway(fingerprint: bigint): boolean {
    return this.sentAway.has(fingerprint);
  }

  /** True when `host`'s queue may hold URLs done already (see {@link add}, {@link adopt}). */
  needsFetchedCheck(host: string): boolean {
    return this.hosts.get(host)?.mayRepeat === true;
  }

  /** URLs queued right behind the head of `host`'s queue (at most `limit`, from memory only). */
  peek(host: string, limit: number): string[] {
    const window = this.hosts.get(host)?.window ?? [];
    return window.slice(0, limit).map((entry) => entry.url);
  }

  /**
   * Takes every waiting URL of `host` out of its queue, durably at the next commit: the host now
   * belongs to another agent. URLs being fetched right now are not included. `handOff` gets each URL
   * as its dequeue is recorded, so no commit can write the one without the other's records. A drain of
   * the host already under way is waited for (its URLs are its caller's), then what was queued since is
   * drained: once this resolves, every URL waiting when it was called has been handed off.
   */
  async drainHost(host: string, handOff?: (entry: QueuedUrl) => void): Promise<QueuedUrl[]> {
    const under = this.drains.get(host);
    if (under !== undefined) {
      await under.catch(() => {});
      return this.drainHost(host, handOff);
    }
    const queue = this.hosts.get(host);
    if (!queue?.hasWork || queue.draining) return [];
    const drain = this.drainQueue(host, queue, handOff);
    this.drains.set(host, drain);
    try {
      return await drain;
    } finally {
      this.drains.delete(host);
    }
  }

  /** {@link drainHost} of `queue`, which has work and is not being drained. */
  private async drainQueue(
    host: string,
    queue: HostQueue,
    handOff?: (entry: QueuedUrl) => void,
  ): Promise<QueuedUrl[]> {
    queue.draining = true;
    queue.generation++;
    try {
      // Every entry below `end` is readable once this commit is done.
      let end = queue.record.nextSeq;
      await this.committer.commit();
      const fromDisk: StoredQueueEntry[] = [];
      if (!queue.windowComplete) {
        // URLs queued meanwhile went to disk only (the window is incomplete), to the commit buffer,
        // where a read cannot see them: read again after another commit until none came.
        let from = queue.nextReadSeq;
        for (;;) {
          const read = await readQueue(this.deps.store, host, from, Number.MAX_SAFE_INTEGER, end);
          // A range scan may see past `end` what a commit meanwhile wrote: read on the next round.
          for (const entry of read) if (entry.seq < end) fromDisk.push(entry);
          if (queue.record.nextSeq === end) break;
          from = end;
          end = queue.record.nextSeq;
          await this.committer.commit();
        }
      }
      // The window as it is now, after the reads: a URL put back meanwhile (its fetch could not go on)
      // went to its head. Its entries all come before those read.
      const entries = [...queue.window, ...fromDisk];
      for (const entry of entries) {
        handOff?.(toQueuedUrl(entry));
        this.committer.add(dequeueOp(host, entry.seq));
        this.deps.onSettled?.(entry.url);
      }
      queue.window = [];
      queue.windowComplete = true;
      queue.nextReadSeq = queue.record.nextSeq;
      this.waitingTotal -= queue.waiting;
      queue.waiting = 0;
      return entries.map(toQueuedUrl);
    } finally {
      queue.draining = false;
    }
  }

  /** Queues `entry` of `host` (the seen check is the caller's). */
  private enqueue(host: string, entry: QueuedUrl): void {
    const queue = this.queueOf(host);
    const seq = queue.record.nextSeq++;
    this.dirtyHosts.add(host);
    this.committer.add(enqueueOp(host, seq, entry));
    // Only a window in use grows here: an idle host's URLs wait on disk until it is visited.
    if (queue.windowLive && queue.windowLength < this.queueWindow) {
      queue.window.push({ seq, ...entry });
      queue.nextReadSeq = seq + 1;
    } else {
      queue.windowComplete = false;
    }
    const wasIdle = !queue.hasWork;
    queue.waiting++;
    this.waitingTotal++;
    if (wasIdle) this.deps.onHostReady(host);
    else if ((queue.waiting & (queue.waiting - 1)) === 0) this.deps.onQueueGrew?.(host);
  }

  /** Takes the next URL of `host`'s queue, or undefined when none is waiting. */
  async take(host: string): Promise<StoredQueueEntry | undefined> {
    const queue = this.hosts.get(host);
    if (!queue?.hasWork || queue.draining) return undefined;
    if (queue.window.length === 0) {
      const generation = queue.generation;
      // Entries past the window may still be in the commit buffer: make them readable first.
      await this.committer.commit();
      // The host's next sequence number bounds the read, so a short queue costs no range scan.
      const loaded = await readQueue(
        this.deps.store,
        host,
        queue.nextReadSeq,
        this.queueWindow,
        queue.record.nextSeq,
      );
      // A drain (or another take) changed the queue meanwhile: start over from its new state.
      if (queue.generation !== generation || queue.window.length > 0) return this.take(host);
      queue.window = loaded;
      this.noteWindowLoaded(queue);
      const last = loaded.at(-1);
      if (last) {
        queue.nextReadSeq = last.seq + 1;
        queue.windowComplete = queue.nextReadSeq >= queue.record.nextSeq;
      }
    }
    const entry = queue.window.shift();
    if (!entry) {
      throw new UbiError(ErrorCode.StorageFailed, `queue of ${host} is shorter on disk than its count says`);
    }
    queue.waiting--;
    queue.inFlight++;
    this.waitingTotal--;
    this.inFlightTotal++;
    this.beginFlight(host, entry);
    return entry;
  }

  /**
   * Returns a taken entry to the head of its queue after a fetch that failed and will be tried again,
   * with its failed attempts recorded durably (at the next commit), so a restart or the host's next
   * owner knows how many are left.
   */
  retryLater(host: string, entry: StoredQueueEntry, attempts: number): void {
    const updated: StoredQueueEntry = { ...entry, attempts };
    this.committer.add(enqueueOp(host, entry.seq, { ...toQueuedUrl(entry), attempts }));
    this.putBack(host, updated);
  }

  /**
   * True while `entry`, taken from `host`'s queue, is not yet completed or put back (another copy of
   * its URL, handed away and back meanwhile, may be in flight besides: it does not count).
   */
  isTaken(host: string, entry: StoredQueueEntry): boolean {
    return this.takenEntries.has(takenKey(host, entry));
  }

  /** Returns a taken entry to the head of its queue, e.g. when the host is parked. */
  putBack(host: string, entry: StoredQueueEntry): void {
    const queue = this.queueOf(host);
    queue.window.unshift(entry);
    queue.inFlight--;
    queue.waiting++;
    this.inFlightTotal--;
    this.waitingTotal++;
    this.endFlight(host, entry);
  }

  /** Records how a taken entry ended; durable at the next {@link commit}. */
  complete(host: string, entry: StoredQueueEntry, completion: Completion): void {
    const queue = this.queueOf(host);
    this.committer.add(dequeueOp(host, entry.seq));
    if (completion.done) {
      this.committer.add(...fetchedOps(host, this.deps.fingerprinter.fingerprint(entry.url)));
    }
    if (completion.counted) {
      queue.record.fetched++;
      this.dirtyHosts.add(host);
    }
    queue.inFlight--;
    this.inFlightTotal--;
    this.endFlight(host, entry);
    this.deps.onSettled?.(entry.url);
  }

  /** Resolves when every change made before the call is durable. */
  commit(): Promise<void> {
    return this.committer.commit();
  }

  /** For each URL, whether it is done here (fetched, failed for good, or handed over as done). */
  wasFetched(urls: readonly string[]): Promise<boolean[]> {
    return hasFetched(
      this.deps.store,
      urls.map((url) => this.deps.fingerprinter.fingerprint(url)),
    );
  }

  /**
   * Waits (at most `maxWaitMs`) until no URL of `host` is taken and not completed, then makes every
   * change durable. Returns false when some are still in flight.
   */
  async quiesce(host: string, maxWaitMs: number): Promise<boolean> {
    const flights: Promise<void>[] = [];
    for (const flight of this.flights.values()) if (flight.host === host) flights.push(flight.done);
    let settled = true;
    if (flights.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        // Unref'd like the clock's timers: a wait for a hand-over never holds the process alone.
        timer = setTimeout(() => resolve(false), maxWaitMs).unref();
      });
      settled = await Promise.race([Promise.all(flights).then(() => true), timeout]);
      clearTimeout(timer);
    }
    await this.committer.commit();
    return settled;
  }

  /** Fingerprints of `host`'s done URLs (skipping `skip`, at most `limit`), from the durable record. */
  doneOf(host: string, skip: number, limit: number): Promise<bigint[]> {
    return fetchedOf(this.deps.store, host, skip, limit);
  }

  /**
   * Takes in what another agent knew of `host` (a hand-over): its done URLs, never queued again here
   * and skipped if queued already, its page count (the larger one wins) and why it was given up, if it
   * was. Durable at the next {@link commit}. Returns how many of the done URLs were new here.
   */
  adopt(host: string, handover: AdoptedHost): number {
    const queue = this.queueOf(host);
    let learnt = 0;
    for (const fingerprint of handover.done) {
      if (this.seen.add(fingerprint)) {
        this.committer.add(seenOp(fingerprint));
        learnt++;
      }
      this.committer.add(...fetchedOps(host, fingerprint));
    }
    if (handover.done.length > 0 && queue.hasWork) this.markRecheck(host);
    if (handover.pagesFetched > queue.record.fetched) {
      queue.record.fetched = handover.pagesFetched;
      this.dirtyHosts.add(host);
    }
    if (handover.abandoned !== undefined && queue.record.abandoned === undefined) {
      queue.record.abandoned = handover.abandoned;
      this.dirtyHosts.add(host);
    }
    return learnt;
  }

  private beginFlight(host: string, entry: StoredQueueEntry): void {
    this.takenEntries.add(takenKey(host, entry));
    const url = entry.url;
    const flight = this.flights.get(url);
    if (flight) {
      flight.copies++;
      return;
    }
    let resolve = () => {};
    const done = new Promise<void>((settle) => {
      resolve = settle;
    });
    this.flights.set(url, { host, done, resolve, copies: 1 });
  }

  private endFlight(host: string, entry: StoredQueueEntry): void {
    this.takenEntries.delete(takenKey(host, entry));
    const flight = this.flights.get(entry.url);
    if (flight === undefined || --flight.copies > 0) return;
    flight.resolve();
    this.flights.delete(entry.url);
  }

  /** Marks `queue`'s window as the most recently loaded; drops the oldest idle ones past the bound. */
  private noteWindowLoaded(queue: HostQueue): void {
    this.windowed.delete(queue.host);
    this.windowed.set(queue.host, queue);
    if (this.windowed.size <= this.maxWindowedHosts) return;
    for (const [host, old] of this.windowed) {
      if (this.windowed.size <= this.maxWindowedHosts) return;
      // The window just loaded and those of hosts being visited stay; the next load tries again.
      if (old === queue || old.inFlight > 0 || old.draining) continue;
      old.evictWindow();
      this.windowed.delete(host);
    }
  }

  /** URLs held in the hosts' windows in memory (the rest of the frontier is on disk). */
  get windowedUrls(): number {
    let total = 0;
    for (const queue of this.windowed.values()) total += queue.windowLength;
    return total;
  }

  private queueOf(host: string): HostQueue {
    let queue = this.hosts.get(host);
    if (!queue) {
      queue = new HostQueue(host, { nextSeq: 0, fetched: 0 }, 0, 0);
      this.hosts.set(host, queue);
    }
    return queue;
  }
}

/** What tells a taken entry apart: its host and its place in the host's queue. */
function takenKey(host: string, entry: StoredQueueEntry): string {
  return `${host} ${entry.seq}`;
}

/** A stored entry without its sequence number (attempts, sitemap mark, lastmod and changefreq kept when set). */
function toQueuedUrl(entry: StoredQueueEntry): QueuedUrl {
  const { seq: _seq, ...queued } = entry;
  return queued;
}
