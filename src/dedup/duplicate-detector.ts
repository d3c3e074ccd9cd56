import { watchAbort } from "../abort-watch.js";
import { type Clock, sleep, type TimerHandle } from "../clock.js";
import type { PayloadOriginal } from "../storage/index.js";
import { MAX_DIGESTS_PER_MESSAGE } from "../transport/index.js";
import type { DigestQuestion, DigestRegistry, DigestSettlement, DigestVerdict } from "./digest-registry.js";

/**
 * How long questions for one peer are gathered, at most, while a message of questions to it is in
 * flight: a question to an owner with none in flight goes at once, and those asked meanwhile go
 * together when its answer comes, or after this long.
 */
export const DEFAULT_DIGEST_BATCH_MS = 10;
/**
 * How long settlements for one peer wait for a message of questions to ride on before they go out in
 * one of their own: only agents waiting on these claims (pending) wait for them.
 */
export const DEFAULT_SETTLE_BATCH_MS = 250;
/**
 * An owner whose answers take longer than this (a moving average) is not asked for a while: its
 * digests' payloads are stored whole, so a slow or unreachable peer costs bytes, never crawl time.
 */
export const SLOW_OWNER_MS = 500;
/** How often a slow owner is asked again, to learn whether it is fast again. */
const SLOW_OWNER_PROBE_MS = 5_000;
/**
 * Payloads this agent stored or heard were stored, remembered by digest (the least recently used
 * forgotten first, ~400 bytes each): a copy fetched here again is a revisit of it without a question.
 */
export const DEFAULT_KNOWN_DIGESTS = 4_096;
/** Weight of the latest answer time in an owner's moving average. */
const LATENCY_WEIGHT = 0.2;
/** First wait before asking again about a digest another agent is storing; doubled up to 2 s. */
const PENDING_RETRY_MS = 50;
const PENDING_RETRY_MAX_MS = 2_000;

/** How a {@link DuplicateDetector} reaches other agents' digest registries (absent alone). */
export interface DigestPeers {
  /** The agent that owns `digest` in the current view. */
  ownerOf(digest: string): string;
  /** Asks `peer` about digests it owns, telling it first of claims settled since (`settlements`). */
  check(
    peer: string,
    questions: readonly DigestQuestion[],
    settlements: readonly DigestSettlement[],
  ): Promise<DigestVerdict[]>;
  /** Tells `peer` what became of digests it said were new. */
  settle(peer: string, settlements: readonly DigestSettlement[]): Promise<void>;
}

/** What a {@link DuplicateDetector} needs. */
export interface DuplicateDetectorDeps {
  readonly selfId: string;
  readonly clock: Clock;
  /** The registry of the digests this agent owns. */
  readonly registry: DigestRegistry;
  readonly peers?: DigestPeers;
  /** Called once per message sent to another agent (stats). */
  readonly onMessage?: () => void;
  /** Called once per payload to be stored without its owner's answer (stats: each a possible copy). */
  readonly onUnchecked?: () => void;
}

/**
 * What to do with a payload: `seen`, write a revisit of `original`; `claimed`, store it and then
 * {@link DuplicateDetector.settle} the claim with `owner`; `unchecked`, store it and settle it all the
 * same (its owner could not be asked, or the claim of another agent never ended): the owner then counts
 * it as a copy if the payload was stored before, or takes it as the payload's original.
 */
export type Duplicate =
  | { readonly kind: "seen"; readonly original: PayloadOriginal }
  | { readonly kind: "claimed"; readonly owner: string }
  | { readonly kind: "unchecked"; readonly owner: string };

/** A payload one of this agent's pages is storing, and what waits for its outcome. */
interface Storing {
  readonly stored: Promise<PayloadOriginal | undefined>;
  readonly resolve: (original: PayloadOriginal | undefined) => void;
}

interface Outbox<T, R> {
  items: T[];
  waiters: { resolve: (result: R) => void; reject: (error: unknown) => void }[];
  timer?: TimerHandle;
  /** Sends the outbox now. */
  flush: () => void;
}

/**
 * The asking side of cluster-wide duplicate detection: sends a payload's digest to the agent that owns
 * it (itself, or a peer: at once when no question to that peer is in flight, else in a batch gathered
 * meanwhile, as Nagle's algorithm does, so a lone host's page waits one round trip and a busy agent's
 * questions still share messages), asks again while another agent is storing the same bytes, and tells
 * the owner once the response is stored.
 *
 * A payload this agent stored (or heard was stored) lately is a revisit at once, and a copy that comes
 * while one of its pages is storing the same bytes waits for that page: so an agent stores each payload
 * once even when its owner cannot be asked, and a race between n agents stores it at most n times —
 * each copy counted by the owner when it is told.
 */
export class DuplicateDetector {
  private readonly questions = new Map<string, Outbox<DigestQuestion, DigestVerdict>>();
  /** Messages of questions in flight, per owner. */
  private readonly questionsInFlight = new Map<string, number>();
  private readonly settlements = new Map<string, Outbox<DigestSettlement, undefined>>();
  private readonly batchMs: number;
  private readonly claimLeaseMs: number;
  /** Each remote owner's answer time (moving average), and when a slow one may be asked again. */
  private readonly owners = new Map<string, { latencyMs: number; probeAtMs: number }>();
  /** Originals of payloads stored here or answered `seen` lately, least recently used first. */
  private readonly known = new Map<string, PayloadOriginal>();
  private readonly knownLimit: number;
  /** Payloads this agent's pages are storing now, by digest. */
  private readonly storing = new Map<string, Storing>();

  constructor(
    options: { readonly batchMs?: number; readonly claimLeaseMs: number; readonly knownDigests?: number },
    private readonly deps: DuplicateDetectorDeps,
  ) {
    this.batchMs = options.batchMs ?? DEFAULT_DIGEST_BATCH_MS;
    this.claimLeaseMs = options.claimLeaseMs;
    this.knownLimit = options.knownDigests ?? DEFAULT_KNOWN_DIGESTS;
  }

  /** Whether the payload with `digest` was stored before, and what to do with it. */
  async check(digest: string, signal?: AbortSignal): Promise<Duplicate> {
    const owner = this.deps.peers?.ownerOf(digest) ?? this.deps.selfId;
    const startedAtMs = this.deps.clock.now();
    for (let waitMs = PENDING_RETRY_MS; ; waitMs = Math.min(waitMs * 2, PENDING_RETRY_MAX_MS)) {
      // Awaited only when another page is storing these bytes: a first question goes out synchronously.
      const local =
        this.recall(digest) ??
        (this.storing.has(digest) ? await this.storedMeanwhile(digest, signal) : undefined);
      if (local !== undefined) return { kind: "seen", original: local };
      const verdict = await this.verdictOf(owner, digest, startedAtMs);
      if (verdict.kind === "seen") {
        this.remember(digest, verdict.original);
        return verdict;
      }
      if (verdict.kind === "pending") {
        await sleep(this.deps.clock, waitMs, signal);
        continue;
      }
      // Another of this agent's pages began to store these bytes while this one was asking: wait for it.
      if (this.storing.has(digest)) continue;
      let resolve: Storing["resolve"] = () => {};
      const stored = new Promise<PayloadOriginal | undefined>((settled) => {
        resolve = settled;
      });
      this.storing.set(digest, { stored, resolve });
      if (verdict.kind === "new") return { kind: "claimed", owner };
      this.deps.onUnchecked?.();
      return { kind: "unchecked", owner };
    }
  }

  /**
   * The owner's answer about `digest`, or `unchecked` when it cannot be had: the owner is slow (and
   * this is not its probe), unreachable, or another agent's claim outlived its lease.
   */
  private async verdictOf(
    owner: string,
    digest: string,
    startedAtMs: number,
  ): Promise<DigestVerdict | { readonly kind: "unchecked" }> {
    const now = this.deps.clock.now();
    if (now - startedAtMs > this.claimLeaseMs + PENDING_RETRY_MAX_MS) return { kind: "unchecked" };
    const known = this.owners.get(owner);
    if (known !== undefined && known.latencyMs > SLOW_OWNER_MS) {
      if (now < known.probeAtMs) return { kind: "unchecked" };
      // This question is the probe; the others keep going around the slow owner meanwhile.
      known.probeAtMs = now + SLOW_OWNER_PROBE_MS;
    }
    try {
      return await this.ask(owner, { digest, asker: this.deps.selfId });
    } catch {
      return { kind: "unchecked" };
    }
  }

  /** The original of `digest` if this agent stored it or heard it was stored lately. */
  private recall(digest: string): PayloadOriginal | undefined {
    const known = this.known.get(digest);
    if (known !== undefined) this.remember(digest, known);
    return known;
  }

  /**
   * The original of `digest` once another of this agent's pages that is storing it now has stored it:
   * waited for at most a claim's lease (a page whose commit never comes is not waited for again).
   */
  private async storedMeanwhile(
    digest: string,
    signal: AbortSignal | undefined,
  ): Promise<PayloadOriginal | undefined> {
    const storing = this.storing.get(digest);
    if (storing === undefined) return undefined;
    const original = await this.within(storing.stored, this.claimLeaseMs, signal);
    if (original === undefined && this.storing.get(digest) === storing) this.storing.delete(digest);
    return original;
  }

  /** `outcome`, or undefined once `limitMs` have passed first; rejects when `signal` aborts first. */
  private within<T>(
    outcome: Promise<T>,
    limitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<T | undefined> {
    const { clock } = this.deps;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = clock.setTimeout(() => {
        unwatch?.();
        resolve(undefined);
      }, limitMs);
      const unwatch =
        signal &&
        watchAbort(signal, () => {
          clock.clearTimeout(timer);
          reject(signal.reason);
        });
      void outcome.then((value) => {
        clock.clearTimeout(timer);
        unwatch?.();
        resolve(value);
      });
    });
  }

  /**
   * Ends a `claimed` or `unchecked` verdict of {@link check}: `original` is the stored (and synced)
   * response, or undefined when it could not be stored. This agent's pages waiting for it go on at once;
   * resolves once the owner knows. A failure leaves a claim to run out at the owner (and a copy uncounted).
   */
  async settle(owner: string, digest: string, original: PayloadOriginal | undefined): Promise<void> {
    const storing = this.storing.get(digest);
    if (storing !== undefined) {
      this.storing.delete(digest);
      storing.resolve(original);
    }
    if (original !== undefined) this.remember(digest, original);
    const settlement = original === undefined ? { digest } : { digest, original };
    if (owner === this.deps.selfId || !this.deps.peers) {
      this.deps.registry.settle(this.deps.selfId, [settlement]);
      return;
    }
    try {
      await this.enqueue(
        this.settlements,
        owner,
        settlement,
        (items) => this.sendSettlements(owner, items),
        DEFAULT_SETTLE_BATCH_MS,
      );
    } catch {
      // The owner is unreachable: its claim runs out, and the next agent with these bytes stores them.
    }
  }

  /** Stops the timers of batches not sent yet; their callers are rejected. */
  stop(): void {
    for (const { resolve } of this.storing.values()) resolve(undefined);
    this.storing.clear();
    for (const outboxes of [this.questions, this.settlements] as Map<string, Outbox<unknown, unknown>>[]) {
      for (const outbox of outboxes.values()) {
        if (outbox.timer !== undefined) this.deps.clock.clearTimeout(outbox.timer);
        for (const { reject } of outbox.waiters) reject(new Error("duplicate detection stopped"));
      }
      outboxes.clear();
    }
  }

  /** Keeps `original` as the most recently used of the known payloads, forgetting the least if full. */
  private remember(digest: string, original: PayloadOriginal): void {
    this.known.delete(digest);
    this.known.set(digest, original);
    if (this.known.size > this.knownLimit) this.known.delete(this.known.keys().next().value as string);
  }

  private ask(owner: string, question: DigestQuestion): Promise<DigestVerdict> {
    if (owner === this.deps.selfId || !this.deps.peers) {
      return this.deps.registry.check([question]).then((verdicts) => verdicts[0] as DigestVerdict);
    }
    const idle = (this.questionsInFlight.get(owner) ?? 0) === 0;
    return this.enqueue(
      this.questions,
      owner,
      question,
      (items) => this.sendQuestions(owner, items),
      idle ? 0 : this.batchMs,
    );
  }

  /** Sends `items` to `owner` with the settlements waiting for it; once answered, the questions asked meanwhile go. */
  private async sendQuestions(owner: string, items: readonly DigestQuestion[]): Promise<DigestVerdict[]> {
    const peers = this.deps.peers as DigestPeers;
    // The settlements waiting for this owner go along.
    const riding = this.settlements.get(owner);
    if (riding) this.settlements.delete(owner);
    if (riding?.timer !== undefined) this.deps.clock.clearTimeout(riding.timer);
    this.deps.onMessage?.();
    this.questionsInFlight.set(owner, (this.questionsInFlight.get(owner) ?? 0) + 1);
    const sentAtMs = this.deps.clock.now();
    try {
      const verdicts = await peers.check(owner, items, riding?.items ?? []);
      this.noteAnswerTime(owner, this.deps.clock.now() - sentAtMs);
      for (const { resolve } of riding?.waiters ?? []) resolve(undefined);
      return verdicts;
    } catch (error) {
      // No answer: as slow as it gets, until a probe says otherwise.
      this.noteAnswerTime(owner, Number.POSITIVE_INFINITY);
      for (const { reject } of riding?.waiters ?? []) reject(error);
      throw error;
    } finally {
      const left = (this.questionsInFlight.get(owner) ?? 1) - 1;
      if (left > 0) this.questionsInFlight.set(owner, left);
      else {
        this.questionsInFlight.delete(owner);
        this.questions.get(owner)?.flush();
      }
    }
  }

  /**
   * Folds an answer time of `owner` into its moving average; a failure counts as slow at once, and an
   * answer of an owner taken for slow (a probe) is a fresh start. An owner turning slow is asked again
   * after {@link SLOW_OWNER_PROBE_MS}.
   */
  private noteAnswerTime(owner: string, elapsedMs: number): void {
    const now = this.deps.clock.now();
    const known = this.owners.get(owner);
    const wasSlow = known !== undefined && known.latencyMs > SLOW_OWNER_MS;
    const latencyMs =
      known === undefined || wasSlow || !Number.isFinite(elapsedMs)
        ? elapsedMs
        : known.latencyMs + LATENCY_WEIGHT * (elapsedMs - known.latencyMs);
    const turnsSlow = latencyMs > SLOW_OWNER_MS && !wasSlow;
    this.owners.set(owner, {
      latencyMs,
      probeAtMs: turnsSlow ? now + SLOW_OWNER_PROBE_MS : (known?.probeAtMs ?? now),
    });
  }

  private async sendSettlements(owner: string, items: readonly DigestSettlement[]): Promise<undefined[]> {
    this.deps.onMessage?.();
    await this.deps.peers?.settle(owner, items);
    return items.map(() => undefined);
  }

  /**
   * Adds `item` to `peer`'s outbox in `outboxes`; the outbox goes out `waitMs` after its first item (at
   * once for 0), or at once when full, or when its {@link Outbox.flush} is called, through `send`, whose
   * results (one per item, in order) resolve the callers.
   */
  private enqueue<T, R>(
    outboxes: Map<string, Outbox<T, R>>,
    peer: string,
    item: T,
    send: (items: T[]) => Promise<R[]>,
    waitMs: number,
  ): Promise<R> {
    let outbox = outboxes.get(peer);
    if (!outbox) {
      const created: Outbox<T, R> = {
        items: [],
        waiters: [],
        flush: () => {
          if (outboxes.get(peer) !== created) return;
          outboxes.delete(peer);
          if (created.timer !== undefined) this.deps.clock.clearTimeout(created.timer);
          send(created.items).then(
            (results) => {
              for (const [i, { resolve }] of created.waiters.entries()) resolve(results[i] as R);
            },
            (error: unknown) => {
              for (const { reject } of created.waiters) reject(error);
            },
          );
        },
      };
      outbox = created;
      outboxes.set(peer, outbox);
    }
    const result = new Promise<R>((resolve, reject) => outbox.waiters.push({ resolve, reject }));
    outbox.items.push(item);
    if (outbox.items.length >= MAX_DIGESTS_PER_MESSAGE || waitMs === 0) outbox.flush();
    else outbox.timer ??= this.deps.clock.setTimeout(outbox.flush, waitMs);
    return result;
  }
}
