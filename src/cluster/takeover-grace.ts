import type { Clock } from "../clock.js";
import type { AgentSpec, Assignment } from "../hashing/index.js";

/** @default of the takeover delay: a supervisor's restart of a crashed agent fits well within it. */
export const DEFAULT_TAKEOVER_DELAY_MS = 10_000;

/** What {@link TakeoverGrace} needs. */
export interface TakeoverGraceDeps {
  readonly clock: Clock;
  /** The current assignment (it changes with the view). */
  readonly current: () => Assignment;
  /** Builds the assignment of `agents` (the current one plus a crashed agent). */
  readonly build: (agents: readonly AgentSpec[]) => Assignment;
  /** Told when the grace of crashed agent `id` ran out (noticed the next time held hosts are asked about). */
  readonly onEnded?: (id: string) => void;
}

interface Crash {
  readonly spec: AgentSpec;
  readonly atMs: number;
  /** The current assignment with the crashed agent put back, for the assignment it was built from. */
  withVictim?: { readonly base: Assignment; readonly assignment: Assignment };
}

/**
 * Hosts inherited from a crashed agent wait a grace period before their new owner crawls them. A dead
 * agent cannot answer page recovery and its queue died with it, so taking its hosts at once refetches
 * everything it had fetched there; an agent restarted on its data dir within the grace takes them back
 * (its queue and fetched set intact), and the only pages fetched twice are those in flight at the kill.
 * Past the grace the new owners crawl them, as without it. Graceful leaves hand their queues over and
 * are not held. Each agent decides from its own view, with no coordination.
 */
export class TakeoverGrace {
  private readonly crashes = new Map<string, Crash>();

  constructor(
    /** How long a crashed agent's hosts wait, ms; 0 takes them over at once. */
    readonly delayMs: number,
    private readonly deps: TakeoverGraceDeps,
  ) {}

  /** Agent `spec` was found dead (suspected, not left) now. */
  noteCrashed(spec: AgentSpec): void {
    if (this.delayMs <= 0) return;
    this.crashes.set(spec.id, { spec, atMs: this.deps.clock.now() });
  }

  /** Agent `id` is alive again (or left on purpose): its hosts are its own, nothing to hold for it. */
  forget(id: string): void {
    this.crashes.delete(id);
  }

  /** Crashed agents whose hosts are still held. */
  get heldFor(): readonly string[] {
    this.expire();
    return [...this.crashes.keys()];
  }

  /**
   * When this agent may start crawling `host`: the end of the grace of the crashed agent that owned it,
   * or 0 when nothing holds it.
   */
  heldUntilMs(host: string): number {
    if (this.crashes.size === 0) return 0;
    this.expire();
    let until = 0;
    for (const crash of this.crashes.values()) {
      if (this.ownerWithVictim(crash, host) === crash.spec.id)
        until = Math.max(until, crash.atMs + this.delayMs);
    }
    return until;
  }

  private expire(): void {
    const now = this.deps.clock.now();
    for (const [id, crash] of this.crashes) {
      if (now < crash.atMs + this.delayMs) continue;
      this.crashes.delete(id);
      this.deps.onEnded?.(id);
    }
  }

  /** Owner of `host` if the crashed agent were alive in the current view (contravariance: it or the same). */
  private ownerWithVictim(crash: Crash, host: string): string {
    const base = this.deps.current();
    if (base.has(crash.spec.id)) return base.ownerOf(host);
    if (crash.withVictim?.base !== base) {
      crash.withVictim = { base, assignment: this.deps.build([...base.agents, crash.spec]) };
    }
    return crash.withVictim.assignment.ownerOf(host);
  }
}
