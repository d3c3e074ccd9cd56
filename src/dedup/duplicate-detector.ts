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
}

/**
 * What to do with a payload: `seen`, write a revisit of `original`; `claimed`, store it and then
 * {@link DuplicateDetector.settle} the claim with `owner`; `unchecked`, store it (its owner could not
 * be asked, or the claim of another agent never ended).
 */
export type Duplicate =
  | { readonly kind: "seen"; readonly original: PayloadOriginal }
  | { readonly kind: "claimed"; readonly owner: string }
  | { readonly kind: "unchecked" };

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
 * the owner once the claimed response is stored.
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

  constructor(
    options: { readonly batchMs?: number; readonly claimLeaseMs: number },
    private readonly deps: DuplicateDetectorDeps,
  ) {
    this.batchMs = options.batchMs ?? DEFAULT_DIGEST_BATCH_MS;
    this.claimLeaseMs = options.claimLeaseMs;
  }

  /** Whether the payload with `digest` was stored before, and what to do with it. */
  async check(digest: string, signal?: AbortSignal): Promise<Duplicate> {
    const owner = this.deps.peers?.ownerOf(digest) ?? this.deps.selfId;
    const startedAtMs = this.deps.clock.now();
    const known = this.owners.get(owner);
    if (known !== undefined && known.latencyMs > SLOW_OWNER_MS) {
      if (startedAtMs < known.probeAtMs) return { kind: "unchecked" };
      // This question is the probe; the others keep going around the slow owner meanwhile.
      known.probeAtMs = startedAtMs + SLOW_OWNER_PROBE_MS;
    }
    for (let waitMs = PENDING_RETRY_MS; ; waitMs = Math.min(waitMs * 2, PENDING_RETRY_MAX_MS)) {
      let verdict: DigestVerdict;
      try {
        verdict = await this.ask(owner, { digest, asker: this.deps.selfId });
      } catch {
        return { kind: "unchecked" };
      }
      if (verdict.kind === "seen") return verdict;
      if (verdict.kind === "new") return { kind: "claimed", owner };
      // Another agent is storing these bytes: its confirmation comes within its lease, or the lease ends.
      if (this.deps.clock.now() - startedAtMs > this.claimLeaseMs + PENDING_RETRY_MAX_MS) {
        return { kind: "unchecked" };
      }
      await sleep(this.deps.clock, waitMs, signal);
    }
  }

  /**
   * Ends a claim: `original` is the stored (and synced) response, or undefined when it could not be
   * stored. Resolves once the owner knows; a failure leaves the claim to run out at the owner.
   */
  async settle(owner: string, digest: string, original: PayloadOriginal | undefined): Promise<void> {
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
    for (const outboxes of [this.questions, this.settlements] as Map<string, Outbox<unknown, unknown>>[]) {
      for (const outbox of outboxes.values()) {
        if (outbox.timer !== undefined) this.deps.clock.clearTimeout(outbox.timer);
        for (const { reject } of outbox.waiters) reject(new Error("duplicate detection stopped"));
      }
      outboxes.clear();
    }
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
