import { Heap } from "heap-js";
import type { Clock, TimerHandle } from "../clock.js";

/** A planned revisit: only its page's key (the history is read back from the store when it is due). */
export interface PlannedRevisit {
  /** The page's `nextAtMs`: which plan this is. */
  readonly atMs: number;
  /** When to look at it: `atMs`, or later while its host is another agent's. */
  readonly dueMs: number;
  /** The last wait for its host to be this agent's again, ms (0: none yet). */
  readonly waitMs: number;
  readonly host: string;
  readonly fingerprint: bigint;
}

/**
 * The planned revisits in the order they fall due, with one timer, set for the earliest, that calls
 * `onDue`; the caller then takes the due plans ({@link takeDue}) and arms the timer again once it has
 * dealt with them. Plans are only keys: a million planned pages cost a heap entry each.
 */
export class RevisitTimetable {
  private readonly plans = new Heap<PlannedRevisit>((a, b) => a.dueMs - b.dueMs);
  private timer: TimerHandle | undefined;
  private timerAtMs = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: () => void,
  ) {}

  /** Plans waiting (not yet taken). */
  get length(): number {
    return this.plans.length;
  }

  /** Adds the plan of a page due at `atMs`; {@link arm} sets the timer for it. */
  add(atMs: number, host: string, fingerprint: bigint): void {
    this.plans.push({ atMs, dueMs: atMs, waitMs: 0, host, fingerprint });
  }

  /** Puts `plan` back, to be looked at again in `waitMs` (its host is another agent's for now). */
  postpone(plan: PlannedRevisit, waitMs: number): void {
    this.plans.push({ ...plan, dueMs: this.clock.now() + waitMs, waitMs });
  }

  /** Takes out every plan due by `byMs` (by now unless given). */
  takeDue(byMs = this.clock.now()): PlannedRevisit[] {
    const due: PlannedRevisit[] = [];
    for (let next = this.plans.peek(); next !== undefined && next.dueMs <= byMs; next = this.plans.peek()) {
      due.push(this.plans.pop() as PlannedRevisit);
    }
    return due;
  }

  /** How late the earliest plan is, ms: 0 when none is due yet (cheap: the heap's head). */
  overdueMs(): number {
    const next = this.plans.peek();
    return next === undefined ? 0 : Math.max(0, this.clock.now() - next.dueMs);
  }

  /**
   * Divides the wait left of each plan by `ratioOf(plan)` (a page given 3× the frequency comes 3×
   * nearer; undefined or not above 0: unchanged), and sets the timer for the new earliest. A plan
   * keeps its `atMs` (the stored plan it is); one due already, or waiting for its host, keeps its time.
   */
  rescale(ratioOf: (plan: PlannedRevisit) => number | undefined): void {
    const now = this.clock.now();
    this.plans.init(
      this.plans.toArray().map((plan) => {
        const ratio = ratioOf(plan);
        if (ratio === undefined || !(ratio > 0) || plan.waitMs > 0 || plan.dueMs <= now) return plan;
        return { ...plan, dueMs: now + (plan.dueMs - now) / ratio };
      }),
    );
    this.disarm();
    this.arm();
  }

  /** Sets the timer for the earliest plan, unless one is set for then or earlier. */
  arm(): void {
    const next = this.plans.peek();
    if (this.stopped || next === undefined || next.dueMs >= this.timerAtMs) return;
    this.disarm();
    this.timerAtMs = next.dueMs;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAtMs = Number.POSITIVE_INFINITY;
        this.onDue();
      },
      Math.max(0, next.dueMs - this.clock.now()),
    );
  }

  /** Clears the timer for good. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtMs = Number.POSITIVE_INFINITY;
  }
}
