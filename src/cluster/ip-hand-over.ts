/**
 * A change of the view: until `atMs + graceMs`, a fresh address whose authority was another agent then
 * is handed over by it first, or held for the grace if it is gone.
 */
interface Takeover {
  readonly atMs: number;
  /** The authority of an address before the change (undefined: none known but this agent). */
  readonly previousOf: (ip: string) => string | undefined;
}

/** How an authority new to an address takes it over (see {@link IpHandOvers.takeOverOf}). */
export interface IpTakeOver {
  /** The previous authority, alive: to be asked to hand the address over (undefined: none to ask). */
  readonly askFrom?: string;
  /** A crashed previous authority's grants may run, and start, until this (-Infinity: none crashed). */
  readonly holdUntilMs: number;
}

/**
 * The hand-over of addresses between authorities, as one authority sees it: the view changes of the
 * last grace, from which an address fresh here is taken over (from its previous authority if alive, else
 * held for the grace), and the addresses this agent handed over to another, where it grants nothing
 * for the grace. It keeps no per-address state of its own but the latter.
 */
export class IpHandOvers {
  private takeovers: Takeover[] = [];
  /** Addresses handed over to another authority, until when nothing is granted there. */
  private readonly handedOff = new Map<string, number>();

  /**
   * @param graceMs how late another agent may still grant for an address this one just took over, ms.
   * @param isAlive true while agent `id` is alive in this agent's view.
   */
  constructor(
    private readonly graceMs: number,
    private readonly isAlive: (id: string) => boolean,
  ) {}

  /** The view changed at `now`; `previousOf(ip)` says an address's authority before. */
  viewChanged(now: number, previousOf: (ip: string) => string | undefined): void {
    this.takeovers = this.takeovers.filter((t) => now < t.atMs + this.graceMs);
    this.takeovers.push({ atMs: now, previousOf });
  }

  /** How `ip`, fresh at this authority at `now`, is taken over: the last live previous authority is asked. */
  takeOverOf(ip: string, now: number): IpTakeOver {
    let askFrom: string | undefined;
    let holdUntilMs = Number.NEGATIVE_INFINITY;
    for (const t of this.takeovers) {
      const end = t.atMs + this.graceMs;
      const previous = end > now ? t.previousOf(ip) : undefined;
      if (previous === undefined) continue;
      if (this.isAlive(previous)) askFrom = previous;
      // A crashed authority cannot answer: what it granted may start until the grace ends.
      else holdUntilMs = Math.max(holdUntilMs, end);
    }
    return { askFrom, holdUntilMs };
  }

  /** This agent hands `ip` over to another at `now`: it grants nothing there for the grace. */
  handOff(ip: string, now: number): void {
    this.handedOff.set(ip, now + this.graceMs);
  }

  /** True while `ip` was handed over to another authority within the grace. */
  isHandedOff(ip: string, now: number): boolean {
    const untilMs = this.handedOff.get(ip);
    if (untilMs === undefined) return false;
    if (now < untilMs) return true;
    this.handedOff.delete(ip);
    return false;
  }

  /** Forgets the hand-overs whose grace is over. */
  sweep(now: number): void {
    for (const [ip, untilMs] of this.handedOff) if (now >= untilMs) this.handedOff.delete(ip);
  }
}
