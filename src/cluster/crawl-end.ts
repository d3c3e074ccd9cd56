import type { Clock } from "../clock.js";
import { TerminationDetector, type WorkLoad } from "./termination.js";

/**
 * Least time between two extra heartbeat rounds for termination detection: the end of a crawl is
 * found a few round trips after the last agent goes idle, not a heartbeat interval or two later.
 */
const TERMINATION_PULSE_GAP_MS = 100;

/** What {@link CrawlEnd} needs. */
export interface CrawlEndDeps {
  readonly selfId: string;
  readonly clock: Clock;
  /** The failure detector's suspicion timeout: a suspicion must stand for twice this long. */
  readonly suspectAfterMs: number;
  /** This agent's load now. */
  readonly load: () => WorkLoad;
  /** Ids of the alive agents, self included. */
  readonly aliveIds: () => Iterable<string>;
  /**
   * Local time the latest suspicion still standing began (a member now suspected was swept, or heard
   * of by gossip only); −∞ when no member is suspected.
   */
  readonly lastSuspicionAtMs: () => number;
  /** Heartbeats every member now (between rounds). */
  readonly pulse: () => void;
  /** Called when this agent starts waiting for the end: links buffered while busy should go soon. */
  readonly onAwaitingEnd: () => void;
}

/**
 * Knows when the whole cluster's crawl is over, from the loads heartbeats carry (the rule is
 * {@link TerminationDetector}'s), and speeds the last rounds up: an agent going idle, or one whose
 * round only lacks fresher reports, heartbeats everyone at once instead of waiting for the next round.
 */
export class CrawlEnd {
  private readonly termination = new TerminationDetector();
  /** Set once something waits for the crawl's end (termination detection then asks for fresh loads). */
  private awaitingEnd = false;
  /** This agent's idleness at the last check, to notice it going idle. */
  private wasIdle = false;
  private lastPulseAtMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: CrawlEndDeps) {}

  /** Marks the crawl as started (this agent was given seeds). */
  markStarted(): void {
    this.termination.markStarted();
  }

  /** True once any agent reported work. */
  get hasStarted(): boolean {
    return this.termination.hasStarted;
  }

  /** True when a fresh report from `agentId` was observed. */
  hasReportFrom(agentId: string): boolean {
    return this.termination.hasReportFrom(agentId);
  }

  /** A heartbeat reply's load, measured no earlier than local time `sentAtMs`. */
  observeReply(agentId: string, load: WorkLoad, sentAtMs: number): void {
    this.termination.observe(agentId, load, sentAtMs);
  }

  /**
   * A heartbeat request's load (it may have waited in transit: it only says the crawl started). A
   * sender that just went idle may end the crawl with its reply to a heartbeat now.
   */
  observeRequest(agentId: string, load: WorkLoad): void {
    this.termination.noteStarted(load);
    if (this.awaitingEnd && this.termination.isNewlyIdle(agentId, load)) this.pulse();
  }

  /** Forgets an agent gone from the view. */
  forget(agentId: string): void {
    this.termination.forget(agentId);
  }

  /** True when the termination rule says the whole cluster's crawl is complete. */
  isCrawlComplete(): boolean {
    const now = this.deps.clock.now();
    this.awaitingEnd = true;
    this.deps.onAwaitingEnd();
    const load = this.deps.load();
    this.termination.observe(this.deps.selfId, load, now);
    const wentIdle = load.idle && !this.wasIdle;
    this.wasIdle = load.idle;
    // A live agent falsely suspected (a busy machine), or heard of by gossip and not yet heard from,
    // would be left out of the rounds below; one suspected for twice the suspicion timeout is no such
    // agent, since it would have answered meanwhile. A view that only grew hides no one: a newcomer is
    // in the rounds (which start again for it), and so is one back from a suspicion.
    if (now - this.deps.lastSuspicionAtMs() < 2 * this.deps.suspectAfterMs) return false;
    if (this.termination.check([...this.deps.aliveIds()])) return true;
    // Going idle, or a round short of fresh reports only: ask everyone now, not at the next round.
    if (wentIdle || this.termination.awaitsFreshReports) this.pulse();
    return false;
  }

  /** Heartbeats every member now, when this agent is idle and did not do so in the last moments. */
  private pulse(): void {
    const now = this.deps.clock.now();
    if (now - this.lastPulseAtMs < TERMINATION_PULSE_GAP_MS || !this.deps.load().idle) return;
    this.lastPulseAtMs = now;
    this.deps.pulse();
  }
}
