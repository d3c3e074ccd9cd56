import type { Assignment } from "../hashing/index.js";

/** Agents found gone whose incarnation is remembered, at most: more are forgotten (their restart then waits). */
const MAX_GONE_REMEMBERED = 1_024;

/**
 * How much greater an agent's incarnation must be, back in the view, to count as a restart. An
 * incarnation is its process's start time in ms, and a refutation (an agent suspected wrongly outbids
 * the suspicion, SWIM-style) adds 1 to the incarnation suspected: a live agent back after a false
 * suspicion comes back a few greater, a restarted one greater by its predecessor's lifetime. A process
 * that lived less than this, or a clock set back, looks suspected wrongly (its predecessor's count then
 * runs out: slower, never faster).
 */
export const RESTART_INCARNATION_STEP = 1_000;

/** What a {@link RestartWatch} reads of the failure detector. */
export interface RestartWatchDeps {
  /** The incarnation of agent `id` as this agent knows it (undefined: unknown). */
  readonly incarnationOf: (id: string) => number | undefined;
  /** True when agent `id` left on purpose (announced). */
  readonly hasLeft: (id: string) => boolean;
}

/**
 * Which agents back in the view were restarted, and which are back as the same life: an agent that left
 * the view without a word is remembered with its incarnation, and one back as an incarnation greater by
 * more than refutations add is a new process, whose predecessor's requests ended with it; one back at
 * about the same incarnation was suspected wrongly or cut off by a partition, and still runs what it did.
 */
export class RestartWatch {
  private readonly gone = new Map<string, number>();

  constructor(private readonly deps: RestartWatchDeps) {}

  /**
   * The view changed from `before` to `after`: the agents back in it found gone before without a word,
   * as a restart (a new process) or as the same life (`returned`: suspected wrongly, or on the other
   * side of a partition now healed, where it may have acted as an authority meanwhile).
   */
  viewChanged(before: Assignment, after: Assignment): { restarted: string[]; returned: string[] } {
    for (const { id } of before.agents) {
      const incarnation = this.deps.incarnationOf(id);
      if (after.has(id) || incarnation === undefined || this.deps.hasLeft(id)) continue;
      if (this.gone.size >= MAX_GONE_REMEMBERED) this.gone.clear();
      this.gone.set(id, incarnation);
    }
    const restarted: string[] = [];
    const returned: string[] = [];
    for (const { id } of after.agents) {
      const gone = this.gone.get(id);
      if (gone === undefined || before.has(id)) continue;
      this.gone.delete(id);
      if ((this.deps.incarnationOf(id) ?? gone) > gone + RESTART_INCARNATION_STEP) restarted.push(id);
      else returned.push(id);
    }
    return { restarted, returned };
  }
}
