import type { ClusterFacingAgent } from "../agent/index.js";
import type { Clock, TimerHandle } from "../clock.js";
import type { MemberEntry, MemberStatus } from "../failure-detector/index.js";
import type { Assignment } from "../hashing/index.js";
import type { Logger } from "../logging/index.js";
import { traitsOf } from "../storage/index.js";
import type { Ownership } from "./ownership.js";
import type { TakeoverGrace } from "./takeover-grace.js";
import type { UrlExchange } from "./url-exchange.js";

/**
 * How often the frontier is checked for URLs of hosts owned by others: a fetch in flight when its host
 * was handed over can end put back in the queue (a parked host, a full disk), after the hand-over.
 */
const STRANDED_CHECK_MS = 2_000;
/** Longest wait between two attempts to re-send a crashed agent's URLs when they keep failing. */
const MAX_REDISTRIBUTE_BACKOFF_MS = 60_000;

/** What a {@link ViewStabilizer} needs. */
export interface ViewStabilizerDeps {
  readonly clock: Clock;
  readonly ownership: Ownership;
  readonly grace: TakeoverGrace;
  readonly exchange: Pick<UrlExchange, "onViewChange" | "redistribute" | "rehome" | "send">;
  readonly agent: Pick<ClusterFacingAgent, "hostsWithWork" | "handOver" | "commit" | "wakeHosts">;
  /** Hosts this agent holds but no longer owns: pushed to their owners, and whether there are any. */
  readonly lostHosts: { push(): Promise<unknown>; any(): boolean };
  /** The status of member `id` in the failure detector's table (undefined once forgotten). */
  readonly statusOf: (id: string) => MemberStatus | undefined;
  /** The capacity member `id` had, for the takeover grace's view of it. */
  readonly capacityOf: (id: string) => number;
  /** Called for every agent gone from the alive set. */
  readonly onGone: (id: string) => void;
  /** Called when the ownership changed, with the assignment it was before. */
  readonly onOwnershipChanged?: (previous: Assignment) => void;
  readonly logger: Logger;
}

/**
 * Self-stabilization: when the alive set changes, rebuilds the ownership and re-examines what this
 * agent holds. Queues of hosts it no longer holds are handed to their URLs' owners, and so are the crawls of hosts
 * it held there (with their done URLs); URLs buffered for agents gone go to the new owners, and every
 * URL ever handed to a crashed agent is re-sent to its hosts' new owners; hosts inherited from a
 * crashed agent wait its takeover grace.
 */
export class ViewStabilizer {
  private aliveIds = new Set<string>();
  private reexamining: Promise<void> = Promise.resolve();
  private strandedTimer: TimerHandle | undefined;
  private stopped = false;
  /** A re-examination is queued and has not begun: more requests for one are served by it. */
  private reexamineQueued = false;
  /**
   * The push of hosts held here and owned by others under way, if any: a task of its own, since it may
   * wait long (a quiesce, a barrier, a call), and a view change's re-examination must not wait behind it.
   */
  private pushingLost: Promise<void> | undefined;
  /**
   * Crashed agents whose handed URLs are not re-sent yet, with their failed attempts and when to try
   * again: kept until a re-examination re-sends them (a failed one, a commit on a full disk, leaves them
   * to the next, not lost), or until the agent is back or has left.
   */
  private readonly unredistributed = new Map<string, { failures: number; nextAtMs: number }>();
  /**
   * Agents that left gracefully whose outbox entries here are not yet moved to the next owners of
   * their hosts (`UrlExchange.rehome`): kept until a re-examination moves them, or the agent is back.
   */
  private readonly unrehomed = new Set<string>();

  constructor(private readonly deps: ViewStabilizerDeps) {}

  /** True while `id` is alive in this agent's view. */
  isAlive(id: string): boolean {
    return this.aliveIds.has(id);
  }

  /** Ids of the alive agents, self included. */
  get alive(): ReadonlySet<string> {
    return this.aliveIds;
  }

  /** True while URLs handed to a crashed agent wait to be re-sent (this agent is not idle then). */
  get redistributing(): boolean {
    return this.unredistributed.size > 0;
  }

  /** Resolves when the hand-overs of every view change so far are done, the pushes of held hosts too. */
  async settled(): Promise<void> {
    await this.reexamining;
    await this.pushingLost;
  }

  /**
   * Re-examines the frontier now, as a view change does: URLs put back in queues of hosts this agent no
   * longer owns go to their owners (a leaving agent's, after its fetches in flight ended). Resolves when
   * done.
   */
  handOverStranded(): Promise<void> {
    this.queueReexamine();
    return this.reexamining;
  }

  /** Starts the periodic check for URLs stranded in queues of hosts owned by others. */
  start(): void {
    this.watchStranded();
  }

  /** Stops the periodic check. */
  stop(): void {
    this.stopped = true;
    if (this.strandedTimer !== undefined) this.deps.clock.clearTimeout(this.strandedTimer);
  }

  /**
   * Agents this one handed URLs to in an earlier run (their outboxes are in its state) and that are not
   * in the view it starts with: they may have died while it was down, and no view change will say so.
   * Like a crashed agent's hosts, they get the takeover grace to appear (a whole cluster restarting
   * comes back agent by agent); those still absent then have their URLs re-sent to the current owners.
   */
  resendForAbsent(ids: Iterable<string>): void {
    const dueAtMs = this.deps.clock.now() + this.deps.grace.delayMs;
    for (const id of ids) {
      if (!this.aliveIds.has(id) && !this.unredistributed.has(id)) {
        this.unredistributed.set(id, { failures: 0, nextAtMs: dueAtMs });
      }
    }
  }

  /** The alive set changed: rebuild ownership and re-examine what this agent holds. */
  onViewChange(alive: readonly MemberEntry[]): void {
    if (alive.length === 0) return; // this agent left and no one else is alive: nothing to hand over
    const { deps } = this;
    const previous = this.aliveIds;
    this.aliveIds = new Set(alive.map((member) => member.id));
    // An agent that announced its leave has left; any other gone is taken for crashed.
    const hasLeft = (id: string) => deps.statusOf(id) === "left";
    const newcomers = previous.size === 0 ? [] : [...this.aliveIds].filter((id) => !previous.has(id));
    for (const id of newcomers) deps.logger.info({ event: "agent-joined", peer: id }, `agent ${id} joined`);
    for (const id of [...previous].filter((id) => !this.aliveIds.has(id) && hasLeft(id))) {
      deps.logger.info({ event: "agent-left", peer: id }, `agent ${id} left the cluster`);
    }
    const before = deps.ownership.assignment;
    const changed = deps.ownership.update(alive.map(({ id, capacity }) => ({ id, capacity })));
    if (!changed) return;
    deps.onOwnershipChanged?.(before);
    const gone = [...previous].filter((id) => !this.aliveIds.has(id));
    const crashed = gone.filter((id) => !hasLeft(id));
    for (const id of gone) deps.onGone(id);
    for (const id of this.aliveIds) deps.grace.forget(id);
    for (const id of gone) if (hasLeft(id)) deps.grace.forget(id);
    for (const id of crashed) {
      deps.grace.noteCrashed({ id, capacity: deps.capacityOf(id) });
      if (deps.grace.delayMs > 0) {
        deps.logger.warn(
          { event: "agent-suspected", peer: id },
          `agent ${id} is not answering; its hosts wait ${deps.grace.delayMs} ms for it to come back (--takeover-delay-ms)`,
        );
      } else {
        // Nothing waits: no warning, but a crash and its takeover stay on record.
        deps.logger.info(
          { event: "agent-suspected", peer: id },
          `agent ${id} is not answering; its hosts are taken over now (--takeover-delay-ms 0)`,
        );
      }
    }
    deps.exchange.onViewChange();
    for (const id of crashed) this.unredistributed.set(id, { failures: 0, nextAtMs: 0 });
    for (const id of gone) if (hasLeft(id)) this.unrehomed.add(id);
    this.queueReexamine();
  }

  private queueReexamine(): void {
    if (this.reexamineQueued) return;
    this.reexamineQueued = true;
    this.reexamining = this.reexamining
      .then(() => {
        this.reexamineQueued = false;
        return this.reexamine();
      })
      .catch((error) =>
        this.deps.logger.error({ event: "reexamine-failed", err: error }, "re-examining the frontier failed"),
      );
  }

  /** Hands over, now and then, URLs put back in queues of hosts this agent no longer owns. */
  private watchStranded(): void {
    this.strandedTimer = this.deps.clock.setTimeout(() => {
      if (this.stopped) return;
      const { ownership, agent } = this.deps;
      const stranded = agent.hostsWithWork().some((host) => !ownership.holdsHost(host));
      const now = this.deps.clock.now();
      const due = [...this.unredistributed.values()].some((retry) => retry.nextAtMs <= now);
      if (stranded || this.deps.lostHosts.any() || due || this.unrehomed.size > 0) this.queueReexamine();
      this.watchStranded();
    }, STRANDED_CHECK_MS);
  }

  private async reexamine(): Promise<void> {
    const { agent, ownership, exchange } = this.deps;
    for (const host of agent.hostsWithWork()) {
      if (ownership.holdsHost(host)) continue;
      // Handed off as it is dequeued: a commit in between would lose the URLs to a crash. Each goes to
      // its own owner: the host's, or under URL partitioning the URL's.
      await agent.handOver(host, (entry) =>
        exchange.send(ownership.ownerOfUrl(entry.url, host), entry.url, entry.depth, host, traitsOf(entry)),
      );
    }
    await agent.commit();
    for (const [peer, retry] of [...this.unredistributed]) {
      // An agent back holds what it acknowledged; one that left handed its queue over itself.
      if (this.aliveIds.has(peer) || this.deps.statusOf(peer) === "left") {
        this.unredistributed.delete(peer);
        if (this.deps.statusOf(peer) === "left") this.unrehomed.add(peer);
        continue;
      }
      if (retry.nextAtMs > this.deps.clock.now()) continue;
      try {
        await exchange.redistribute(peer);
        this.unredistributed.delete(peer);
      } catch (error) {
        // The others are not held up; this one is tried again later, less and less often.
        retry.failures++;
        const backoffMs = Math.min(
          MAX_REDISTRIBUTE_BACKOFF_MS,
          STRANDED_CHECK_MS * 2 ** (retry.failures - 1),
        );
        retry.nextAtMs = this.deps.clock.now() + backoffMs;
        this.deps.logger.warn(
          { event: "redistribute-failed", peer, err: error },
          `re-sending the URLs handed to crashed agent ${peer} failed; trying again in ${backoffMs} ms`,
        );
      }
    }
    await this.rehomeLeft();
    agent.wakeHosts();
    this.pushLost();
  }

  /** The outbox entries of agents that left go to their hosts' next owners (see `UrlExchange.rehome`). */
  private async rehomeLeft(): Promise<void> {
    const { exchange, ownership } = this.deps;
    for (const peer of [...this.unrehomed]) {
      // Stopping (the crawl over, every agent leaving): the store closes, and no crash will follow.
      if (this.stopped) return;
      if (this.aliveIds.has(peer)) {
        this.unrehomed.delete(peer);
        continue;
      }
      try {
        await exchange.rehome(peer, (url, host) => ownership.ownerOfUrl(url, host));
        this.unrehomed.delete(peer);
      } catch (error) {
        // Tried again at the next re-examination (the periodic check asks for one while some wait).
        if (this.stopped) return;
        this.deps.logger.warn(
          { event: "rehome-failed", peer, err: error },
          `moving the URLs handed to agent ${peer}, which left, to its hosts' next owners failed; trying again`,
        );
      }
    }
  }

  /**
   * Hosts whose crawl this agent holds go to their new owners with what was done there, unless a push
   * is under way (the periodic check asks again while some are left).
   */
  private pushLost(): void {
    if (this.pushingLost !== undefined) return;
    this.pushingLost = this.deps.lostHosts
      .push()
      .then(
        () => {},
        (error) =>
          this.deps.logger.error(
            { event: "reexamine-failed", err: error },
            "pushing hosts to their owners failed",
          ),
      )
      .finally(() => {
        this.pushingLost = undefined;
      });
  }
}
