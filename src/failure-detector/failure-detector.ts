import { type Clock, sleep, type TimerHandle } from "../clock.js";
import { ErrorCode, invalidArgument, isUbiError, UbiError } from "../errors.js";
import {
  DEFAULT_FORGET_AFTER_MS,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_SUSPECT_AFTER_MS,
} from "./constants.js";
import type { GossipEntry, MemberEntry, RemoteHeartbeat } from "./member.js";
import { MembershipView, type RisenIncarnation } from "./membership-view.js";

/** Options of a {@link FailureDetector}. */
export interface FailureDetectorOptions {
  /** This agent; `incarnation` defaults to the clock's time at construction (a restart bumps it). */
  readonly self: {
    readonly id: string;
    readonly address: string;
    readonly capacity?: number;
    readonly incarnation?: number;
  };
  /** How often each pair of members exchanges a heartbeat (the smaller id asks). @default 1000 */
  readonly heartbeatIntervalMs?: number;
  /** A member not heard from for this long becomes suspected; must exceed the interval. @default 5000 */
  readonly suspectAfterMs?: number;
  /** A suspected or departed member not heard for this long is dropped. @default 3600000 (1 hour) */
  readonly forgetAfterMs?: number;
}

/** Where to send a heartbeat: a known member, or (when joining) just a seed address. */
export interface HeartbeatTarget {
  /** The member's id; undefined for a seed whose id is not known yet. */
  readonly id?: string;
  /** The member's transport address, `host:port`. */
  readonly address: string;
}

/** Dependencies of a {@link FailureDetector}. */
export interface FailureDetectorDeps {
  /** Source of time and timers. */
  readonly clock: Clock;
  /**
   * Sends `heartbeat` to `target` and resolves with its answer. Rejects when unreachable, and with
   * {@link ErrorCode.IdConflict} when the peer refused us; should give up when `signal` aborts.
   */
  readonly sendHeartbeat: (
    target: HeartbeatTarget,
    heartbeat: RemoteHeartbeat,
    signal: AbortSignal,
  ) => Promise<RemoteHeartbeat>;
}

/** How long a peer may take to answer a join or a leave announcement (it may be busy crawling). */
const ANNOUNCE_TIMEOUT_MS = 3_000;

/** Called with the new alive set (sorted by id, self included) whenever it changes. */
export type AliveSetListener = (alive: readonly MemberEntry[]) => void;

/** What a {@link FailureDetector} tells of lives: see {@link FailureDetector.onLives}. */
export interface LivesListener {
  /** Member `id`, alive here, is heard at a greater incarnation (a refutation's +1, or a restart). */
  readonly risen?: (risen: RisenIncarnation) => void;
  /**
   * Another agent held this agent's previous life alive or suspected: this agent restarted before it
   * was found gone. Told once, before the change of the alive set the same message makes.
   */
  readonly previousLife?: () => void;
}

/**
 * A member whose heartbeats came this many intervals ago or less is not heartbeated back: of a pair of
 * agents, one asks and the other answers (more than one interval, so a little jitter does not make the
 * answering one ask too).
 */
const ASKED_RECENTLY_INTERVALS = 1.5;

/**
 * Timeout failure detector with gossip membership. Every interval it heartbeats known members
 * directly (so every live agent eventually suspects a crashed one: strong completeness) and merges
 * the tables that come back; a member silent for `suspectAfterMs` is suspected until it answers again.
 * Of each pair of members, the one with the smaller id asks: the other hears it through its requests
 * and asks only when those stop coming, or when they say its answers do not arrive (a pair whose two
 * directions differ), which halves the heartbeats with no loss of detection.
 */
export class FailureDetector {
  private readonly view: MembershipView;
  private readonly intervalMs: number;
  private readonly suspectAfterMs: number;
  private readonly forgetAfterMs: number;
  private readonly listeners = new Set<AliveSetListener>();
  private readonly livesListeners = new Set<LivesListener>();
  /**
   * Members whose older incarnation was replaced here lately, by id: that incarnation, and until when
   * the answers to the member's heartbeats name it (`RemoteHeartbeat.previousIncarnation`).
   */
  private readonly replaced = new Map<string, { readonly incarnation: number; readonly untilMs: number }>();
  /** True once another agent was heard holding this agent's previous life (see {@link onLives}). */
  private previousLifeTold = false;
  /** One outstanding heartbeat per peer, keyed by id (or address for seeds), so slow peers don't pile up. */
  private readonly inFlight = new Map<string, AbortController>();
  private timer: TimerHandle | undefined;
  private running = false;
  /** When the last round ran (clock ms), to tell a local pause from silent peers. */
  private lastTickAtMs: number | undefined;
  /** True when the last round skipped its sweep: never two in a row, so a crash is always found. */
  private sweepSkipped = false;
  /** When each member's last heartbeat request came in (clock ms), by id; none while it lacks answers. */
  private readonly askedAtMs = new Map<string, number>();
  /** Members whose last heartbeat from here went unanswered, told so in the next one. */
  private readonly unanswered = new Set<string>();
  private readonly selfId: string;

  constructor(
    options: FailureDetectorOptions,
    private readonly deps: FailureDetectorDeps,
  ) {
    this.intervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.suspectAfterMs = options.suspectAfterMs ?? DEFAULT_SUSPECT_AFTER_MS;
    this.forgetAfterMs = options.forgetAfterMs ?? DEFAULT_FORGET_AFTER_MS;
    checkPositive("heartbeatIntervalMs", this.intervalMs);
    checkPositive("suspectAfterMs", this.suspectAfterMs);
    checkPositive("forgetAfterMs", this.forgetAfterMs);
    if (this.suspectAfterMs <= this.intervalMs) {
      invalidArgument(
        `suspectAfterMs (${this.suspectAfterMs}) must exceed heartbeatIntervalMs (${this.intervalMs})`,
      );
    }
    if (this.forgetAfterMs < this.suspectAfterMs) {
      invalidArgument(
        `forgetAfterMs (${this.forgetAfterMs}) must be at least suspectAfterMs (${this.suspectAfterMs})`,
      );
    }
    this.view = new MembershipView({
      ...options.self,
      incarnation: options.self.incarnation ?? deps.clock.now(),
    });
    this.selfId = options.self.id;
  }

  /** Starts heartbeating: one round now, then one every interval. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.tick();
  }

  /** Stops the timer and abandons outstanding heartbeats. Idempotent. */
  stop(): void {
    this.running = false;
    this.lastTickAtMs = undefined;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    for (const controller of this.inFlight.values()) controller.abort(stopped());
    this.inFlight.clear();
  }

  /** Subscribes to alive-set changes (join, suspect, trust, leave); returns the unsubscribe function. */
  onChange(listener: AliveSetListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Subscribes to the lives heard of (see {@link LivesListener}); returns the unsubscribe function. */
  onLives(listener: LivesListener): () => void {
    this.livesListeners.add(listener);
    return () => this.livesListeners.delete(listener);
  }

  /** This agent's own entry. */
  get self(): MemberEntry {
    return this.view.self;
  }

  /** The alive members, self included while it has not left, sorted by id. */
  alive(): MemberEntry[] {
    return this.view.alive();
  }

  /** Every known member with its status, sorted by id. */
  members(): MemberEntry[] {
    return this.view.entries();
  }

  /** See {@link MembershipView.lastSuspicionMs}. */
  lastSuspicionMs(): number {
    return this.view.lastSuspicionMs();
  }

  /** The heartbeat this agent sends (and answers with): its own entry and its whole table. */
  heartbeat(): RemoteHeartbeat {
    return { from: this.view.self, entries: this.view.gossip() };
  }

  /**
   * Handles an incoming heartbeat: marks the sender heard, merges its table and returns the answer.
   * Throws {@link ErrorCode.IdConflict} when the sender's id is alive here at another address (the
   * transport refuses it) and {@link ErrorCode.BadMessage} on malformed entries.
   */
  onHeartbeat(request: RemoteHeartbeat): RemoteHeartbeat {
    this.receive(request);
    // A sender that lacks our answers must hear us through our own requests.
    if (request.unanswered === true) this.askedAtMs.delete(request.from.id);
    else this.askedAtMs.set(request.from.id, this.deps.clock.now());
    const replaced = this.replaced.get(request.from.id);
    return replaced === undefined || this.deps.clock.now() >= replaced.untilMs
      ? this.heartbeat()
      : { ...this.heartbeat(), previousIncarnation: replaced.incarnation };
  }

  /**
   * A member that called this agent directly (a hand-over, say), perhaps before any heartbeat of its
   * reached here: it is alive. Throws {@link ErrorCode.IdConflict} when its id is alive here at another
   * address, as {@link onHeartbeat} does.
   */
  heardFrom(member: GossipEntry): void {
    this.receive({ from: member, entries: [] });
  }

  /** A member another agent named (it holds a host, say): pinged from now on, alive once it answers. */
  learnOf(member: GossipEntry): void {
    if (this.view.introduce(member, this.deps.clock.now())) this.emit();
  }

  /**
   * Joins through seed addresses: heartbeats each and merges the tables of those that answer.
   * Rejects with {@link ErrorCode.IdConflict} if a seed refuses our id, {@link ErrorCode.BadMessage}
   * if one refuses what we sent (an agent it cannot take, such as one partitioning otherwise), or
   * {@link ErrorCode.PeerUnreachable} when no seed answered.
   */
  async join(seedAddresses: readonly string[]): Promise<void> {
    const seeds = seedAddresses.filter((address) => address !== this.view.self.address);
    if (seeds.length === 0) return;
    const results = await Promise.allSettled(
      // A seed may be busy crawling: give it longer than one heartbeat interval to answer.
      seeds.map((address) => this.exchange({ address }, `@${address}`, this.announceTimeoutMs())),
    );
    const failures = results.flatMap((result) =>
      result.status === "rejected" ? [result.reason as unknown] : [],
    );
    const refusal =
      failures.find((reason) => isUbiError(reason, ErrorCode.IdConflict)) ??
      failures.find((reason) => isUbiError(reason, ErrorCode.BadMessage));
    if (refusal !== undefined) throw refusal;
    if (failures.length === results.length) {
      throw new UbiError(ErrorCode.PeerUnreachable, `no seed answered: ${seeds.join(", ")}`, {
        cause: failures[0],
      });
    }
  }

  /**
   * Announces a graceful leave: marks self left and tells every member right away, whether or not a
   * heartbeat to it is outstanding (that one still says alive). While running, a member alive here that
   * did not answer is told again every interval, for up to the suspicion timeout: one that never hears
   * of the leave takes this agent for crashed once it stops. Suspected members are told once.
   */
  async leave(): Promise<void> {
    if (this.view.leave()) this.emit();
    const giveUpAtMs = this.deps.clock.now() + this.suspectAfterMs;
    let untold = this.view.entries().filter((m) => m.id !== this.view.self.id && m.status !== "left");
    while (untold.length > 0) {
      // Keyed apart from the rounds' heartbeats, so an outstanding one does not swallow the news.
      const results = await Promise.allSettled(
        untold.map((member) => this.exchange(member, `leave ${member.id}`, this.announceTimeoutMs())),
      );
      untold = untold.filter(
        (member, i) => results[i]?.status === "rejected" && this.view.get(member.id)?.status === "alive",
      );
      if (untold.length === 0 || !this.running || this.deps.clock.now() + this.intervalMs >= giveUpAtMs) {
        return;
      }
      await sleep(this.deps.clock, this.intervalMs);
      if (!this.running) return;
    }
  }

  private tick(): void {
    this.timer = this.deps.clock.setTimeout(() => this.tick(), this.intervalMs);
    const now = this.deps.clock.now();
    // A round far later than planned means this process was paused (GC, swap, an overloaded machine):
    // the silence it measured is its own, and the heartbeats that came meanwhile wait unread in its
    // sockets. Sweeping now would suspect everyone; the next round sweeps with them read.
    const late = this.lastTickAtMs !== undefined && now - this.lastTickAtMs > this.pauseThresholdMs();
    const paused = late && !this.sweepSkipped;
    this.sweepSkipped = paused;
    this.lastTickAtMs = now;
    if (!paused && this.view.sweep(now, this.suspectAfterMs, this.forgetAfterMs)) this.emit();
    for (const id of this.askedAtMs.keys()) if (this.view.get(id) === undefined) this.askedAtMs.delete(id);
    for (const id of this.unanswered) if (this.view.get(id) === undefined) this.unanswered.delete(id);
    for (const [id, { untilMs }] of this.replaced) if (now >= untilMs) this.replaced.delete(id);
    for (const member of this.targets()) {
      if (this.asksUs(member.id, now)) continue;
      // A failed heartbeat is just silence; suspicion comes from the sweep.
      this.exchange(member, member.id).catch(() => {});
    }
  }

  /** True when `id` is the asker of our pair (the smaller id) and its heartbeats keep coming. */
  private asksUs(id: string, now: number): boolean {
    const askedAtMs = this.askedAtMs.get(id);
    return (
      id < this.selfId &&
      askedAtMs !== undefined &&
      now - askedAtMs <= ASKED_RECENTLY_INTERVALS * this.intervalMs
    );
  }

  /**
   * Heartbeats every member now, between rounds (a member with one outstanding is skipped). For a
   * caller that needs fresh answers sooner than the next round, such as termination detection; the
   * rounds and the sweep keep their schedule.
   */
  pulse(): void {
    if (!this.running) return;
    for (const member of this.targets()) this.exchange(member, member.id).catch(() => {});
  }

  /** Timeout of a join or leave announcement: longer than a round, since it is not retried as often. */
  private announceTimeoutMs(): number {
    return Math.max(this.intervalMs, ANNOUNCE_TIMEOUT_MS);
  }

  /** A round later than this after the previous one follows a local pause (halfway to suspicion). */
  private pauseThresholdMs(): number {
    return this.intervalMs + (this.suspectAfterMs - this.intervalMs) / 2;
  }

  /** Members to heartbeat: alive and suspected ones (a suspected one that answers is trusted again). */
  private targets(): MemberEntry[] {
    return this.view
      .entries()
      .filter(
        (member) =>
          member.id !== this.view.self.id && member.status !== "left" && !this.inFlight.has(member.id),
      );
  }

  /** One heartbeat and its answer; an answer later than one interval does not count as heard. */
  private async exchange(target: HeartbeatTarget, key: string, timeoutMs = this.intervalMs): Promise<void> {
    if (this.inFlight.has(key)) return;
    const controller = new AbortController();
    this.inFlight.set(key, controller);
    const timeout = this.deps.clock.setTimeout(
      () =>
        controller.abort(new UbiError(ErrorCode.PeerUnreachable, `heartbeat to ${target.address} timed out`)),
      timeoutMs,
    );
    const id = target.id;
    const request = { ...this.heartbeat(), unanswered: id !== undefined && this.unanswered.has(id) };
    try {
      const answer = await this.deps.sendHeartbeat(target, request, controller.signal);
      if (controller.signal.aborted) throw controller.signal.reason;
      if (id !== undefined && answer.from?.id !== id) {
        throw new UbiError(
          ErrorCode.BadMessage,
          `${target.address} answered as "${answer.from?.id}", not "${id}"`,
        );
      }
      this.receive(answer);
      if (id !== undefined) this.unanswered.delete(id);
    } catch (error) {
      if (id !== undefined && this.running) this.unanswered.add(id);
      throw error;
    } finally {
      this.deps.clock.clearTimeout(timeout);
      if (this.inFlight.get(key) === controller) this.inFlight.delete(key);
    }
  }

  private receive(heartbeat: RemoteHeartbeat): void {
    const from = heartbeat?.from;
    if (typeof from?.id !== "string") throw new UbiError(ErrorCode.BadMessage, "heartbeat without a sender");
    const entries = [from, ...(heartbeat.entries ?? []).filter((entry) => entry?.id !== from.id)];
    const older =
      typeof from.incarnation === "number" ? this.view.olderLife(from.id, from.incarnation) : undefined;
    const now = this.deps.clock.now();
    const merged = this.view.merge(entries, from.id, now);
    if (older !== undefined) this.rememberReplaced(from.id, older, now);
    for (const { id, before } of merged.risen) this.rememberReplaced(id, before, now);
    const { previousIncarnation } = heartbeat;
    if (
      merged.previousLifeSeen ||
      (previousIncarnation !== undefined && this.view.isPreviousLife(previousIncarnation))
    )
      this.tellPreviousLife();
    if (merged.aliveChanged) this.emit();
    for (const risen of merged.risen) for (const listener of this.livesListeners) listener.risen?.(risen);
  }

  /**
   * Member `id`'s incarnation `incarnation`, held here alive or suspected, was replaced by a newer one at
   * `now`: the answers to its heartbeats say so for a suspicion timeout (the first may be lost or late).
   * The oldest replaced is kept, a refutation's +1 after a restart notwithstanding.
   */
  private rememberReplaced(id: string, incarnation: number, now: number): void {
    const known = this.replaced.get(id);
    const oldest =
      known !== undefined && now < known.untilMs ? Math.min(known.incarnation, incarnation) : incarnation;
    this.replaced.set(id, { incarnation: oldest, untilMs: now + this.suspectAfterMs });
  }

  /** Tells the lives' listeners, once, that another agent held this agent's previous life. */
  private tellPreviousLife(): void {
    if (this.previousLifeTold) return;
    this.previousLifeTold = true;
    for (const listener of this.livesListeners) listener.previousLife?.();
  }

  private emit(): void {
    const alive = this.view.alive();
    for (const listener of this.listeners) listener(alive);
  }
}

function checkPositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0)
    invalidArgument(`${name} must be a positive number of ms, got ${value}`);
}

function stopped(): UbiError {
  return new UbiError(ErrorCode.PeerUnreachable, "failure detector stopped");
}
