import type { Assignment } from "../hashing/index.js";
import type { IpHandOver } from "./ip-grant.js";

/**
 * A change of the view: until `atMs + graceMs`, a fresh address whose authority was another agent then
 * is handed over by it first, or held for the grace if it is gone.
 */
interface Takeover {
  readonly atMs: number;
  /** The agents of the view before the change. */
  readonly membersBefore: ReadonlySet<string>;
  /** The agents of the view after the change (empty: unknown, so no crashed authority is taken over by reports). */
  readonly membersAfter: ReadonlySet<string>;
  /** The authority of an address before the change (undefined: none known but this agent). */
  readonly previousOf: (ip: string) => string | undefined;
  /**
   * The authority of an address among the agents back in the view as the same life (a healed
   * partition), which may have granted there meanwhile (undefined: none; see {@link returnedAuthorityOf}).
   */
  readonly returnedOf?: (ip: string) => string | undefined;
}

/**
 * A previous authority of an address that crashed (see `IpHandOvers.takeOverOf`): the address is taken
 * over from what every other agent of the view before reports it holds there, instead of being held
 * for the grace.
 */
export interface CrashedAuthority {
  /** The agent gone without a word. */
  readonly gone: string;
  /** When this agent's view changed without it. */
  readonly atMs: number;
  /** The agents that must report: those of the view before the change but the gone one (this one included). */
  readonly reporters: readonly string[];
  /** The view after the change: a report counts only if made in the same view. */
  readonly view: ReadonlySet<string>;
  /** The grace's end: by then nothing the gone agent granted may still run, reported or not. */
  readonly untilMs: number;
  /**
   * True when the gone agent is this agent's own previous life (restarted before the others found it
   * gone): its own requests ended with its process, and `reporters` and `view` follow this agent's view
   * until the reports are in (see `IpAuthority.previousLifeMayRun`).
   */
  readonly previousLife?: boolean;
}

/** What one agent holds at an address, as it reports it when an agent left its view (see ip-crash-reports.ts). */
export interface CrashHolding {
  /** Its requests that may still run there (`held`: itself only), whoever granted them, and the waits it knows. */
  readonly state: IpHandOver;
  /** True when it holds a running lease of the gone agent's there: the gone agent had nothing there then. */
  readonly leasedByGone: boolean;
}

/** How an authority new to an address takes it over (see {@link IpHandOvers.takeOverOf}). */
export interface IpTakeOver {
  /** The previous authority, alive: to be asked to hand the address over (undefined: none to ask). */
  readonly askFrom?: string;
  /**
   * Agents to ask too: the address's authorities among agents back in the view as the same life (the
   * other side of a healed partition), alive, but {@link askFrom}.
   */
  readonly askAlso: readonly string[];
  /** A crashed previous authority's grants may run, and start, until this (-Infinity: none crashed). */
  readonly holdUntilMs: number;
  /** What previous authorities that left handed over before they went, durations counted from now. */
  readonly handedOver?: IpHandOver;
  /**
   * The one previous authority that crashed, when it is the only one and the view after is known: its
   * address may be taken over from what the other agents report they hold there (see ip-crash-reports.ts)
   * instead of being held until {@link holdUntilMs}.
   */
  readonly crashed?: CrashedAuthority;
}

/** What an agent leaving handed over to this one: every address of its moving here, at `atMs`. */
interface Leaver {
  readonly atMs: number;
  /**
   * The agents of its view as it handed over: its hand-over stands once a change from that view, after
   * it, took it out of this agent's view (see `IpHandOvers.handedOverFully`).
   */
  readonly view: ReadonlySet<string>;
  /**
   * The addresses where it granted what may still run (any other of its had nothing to hand over), less
   * the releases it forwarded since.
   */
  readonly handOffs: Map<string, IpHandOver>;
}

/**
 * The hand-over of addresses between authorities, as one authority sees it: the view changes of the
 * last grace, from which an address fresh here is taken over (from its previous authority if alive;
 * from what it handed over before it left, if it left gracefully; else held for the grace), and the
 * addresses this agent handed over to another, where it grants nothing for the grace. It keeps no
 * per-address state of its own but the latter and what leavers handed over.
 */
export class IpHandOvers {
  private takeovers: Takeover[] = [];
  /** Addresses handed over to another authority: to whom, and until when nothing is granted there. */
  private readonly handedOff = new Map<string, { readonly to: string; readonly untilMs: number }>();
  /** Agents that left handing their addresses over to this one, for the grace after. */
  private readonly leavers = new Map<string, Leaver>();

  /**
   * @param graceMs how late another agent may still grant for an address this one just took over, ms.
   * @param isAlive true while agent `id` is alive in this agent's view.
   */
  constructor(
    private readonly graceMs: number,
    private readonly isAlive: (id: string) => boolean,
  ) {}

  /**
   * The view changed at `now` from one of `membersBefore`; `previousOf(ip)` says an address's authority
   * before. An agent seen alive again is no longer one that left.
   */
  viewChanged(
    now: number,
    previousOf: (ip: string) => string | undefined,
    membersBefore: readonly string[] = [],
    membersAfter: readonly string[] = [],
    returnedOf?: (ip: string) => string | undefined,
  ): void {
    this.takeovers = this.takeovers.filter((t) => now < t.atMs + this.graceMs);
    this.takeovers.push({
      atMs: now,
      previousOf,
      membersBefore: new Set(membersBefore),
      membersAfter: new Set(membersAfter),
      ...(returnedOf ? { returnedOf } : {}),
    });
    for (const id of this.leavers.keys()) if (this.isAlive(id)) this.leavers.delete(id);
  }

  /**
   * Agent `from`, leaving the cluster, handed over at `now` every address of its whose authority this
   * agent becomes without it: `handOffs` those where it granted what may still run, none elsewhere.
   */
  leftHandingOver(
    from: string,
    handOffs: ReadonlyMap<string, IpHandOver>,
    view: readonly string[],
    now: number,
  ): void {
    this.leavers.set(from, { atMs: now, view: new Set(view), handOffs: new Map(handOffs) });
    // What this agent handed over to it came back with the rest (what it still had, it handed over).
    for (const [ip, handedOff] of this.handedOff) if (handedOff.to === from) this.handedOff.delete(ip);
  }

  /**
   * `count` requests of agent `agent` at `ip`, handed over by agent `from` as it left, ended (a release
   * it forwarded): they count no more when the address is taken over. False when `from` handed over
   * none of `agent`'s requests there.
   */
  releasedSinceHandOff(from: string, ip: string, agent: string, count: number): boolean {
    const handOff = this.leavers.get(from)?.handOffs.get(ip);
    const held = handOff?.held.get(agent);
    if (handOff === undefined || held === undefined) return false;
    const left = new Map(handOff.held);
    if (held > count) left.set(agent, held - count);
    else left.delete(agent);
    this.leavers.get(from)?.handOffs.set(ip, { ...handOff, held: left });
    return true;
  }

  /**
   * How `ip`, fresh at this authority at `now`, is taken over: the last live previous authority is asked;
   * what one that left handed over is taken as it said; one gone without a word is waited out.
   */
  takeOverOf(ip: string, now: number): IpTakeOver {
    let askFrom: string | undefined;
    let holdUntilMs = Number.NEGATIVE_INFINITY;
    let handedOver: IpHandOver | undefined;
    const crashedIds = new Set<string>();
    const tookFrom = new Set<string>();
    const askAlso = new Set<string>();
    for (const t of this.takeovers) {
      const end = t.atMs + this.graceMs;
      const returned = end > now ? t.returnedOf?.(ip) : undefined;
      if (returned !== undefined && this.isAlive(returned)) askAlso.add(returned);
      const previous = end > now ? t.previousOf(ip) : undefined;
      if (previous === undefined) continue;
      if (this.isAlive(previous)) askFrom = previous;
      else if (this.handedOverFully(previous, now)) {
        // Whatever change made it the previous authority here, it handed over all it had once.
        if (tookFrom.has(previous)) continue;
        tookFrom.add(previous);
        const leaver = this.leavers.get(previous);
        const handOff = leaver?.handOffs.get(ip);
        if (leaver && handOff) handedOver = merged(handedOver, aged(handOff, now - leaver.atMs));
      }
      // A crashed authority cannot answer: what it granted may start until the grace ends.
      else {
        holdUntilMs = Math.max(holdUntilMs, end);
        crashedIds.add(previous);
      }
    }
    const [gone] = crashedIds;
    const crashed = crashedIds.size === 1 && gone !== undefined ? this.crashOf(gone, now) : undefined;
    if (askFrom !== undefined) askAlso.delete(askFrom);
    return {
      askFrom,
      askAlso: [...askAlso],
      holdUntilMs,
      ...(handedOver ? { handedOver } : {}),
      ...(crashed ? { crashed } : {}),
    };
  }

  /**
   * True when agent `id` left within the grace handing over to this agent every address of its that
   * comes here: a change of this agent's view since its hand-over (so not an earlier suspicion of it,
   * refuted) took it out of a view equal to the one it handed over from, so it knew every address that
   * moves here. It handed over all it had at each (its own addresses and those it kept for their new
   * authority alike), whichever change of this agent's view made it an address's previous authority.
   */
  private handedOverFully(id: string, now: number): boolean {
    const leaver = this.leavers.get(id);
    if (leaver === undefined || now >= leaver.atMs + this.graceMs) return false;
    return this.takeovers.some(
      (t) =>
        t.atMs >= leaver.atMs &&
        now < t.atMs + this.graceMs &&
        !t.membersAfter.has(id) &&
        sameAgents(leaver.view, t.membersBefore),
    );
  }

  /**
   * The change of the view, within the grace, that found agent `gone` crashed, as its addresses are
   * taken over from the others' reports (undefined: none with both views known). It stands for every
   * earlier change that made `gone` an address's previous authority: the reports say what may still
   * run of all it granted.
   */
  private crashOf(gone: string, now: number): CrashedAuthority | undefined {
    for (let i = this.takeovers.length - 1; i >= 0; i--) {
      const t = this.takeovers[i];
      if (t === undefined || now >= t.atMs + this.graceMs) continue;
      if (t.membersAfter.size === 0 || !t.membersBefore.has(gone) || t.membersAfter.has(gone)) continue;
      const reporters = [...t.membersBefore].filter((id) => id !== gone);
      return { gone, atMs: t.atMs, reporters, view: t.membersAfter, untilMs: t.atMs + this.graceMs };
    }
    return undefined;
  }

  /** This agent hands `ip` over to agent `to` at `now`: it grants nothing there for the grace. */
  handOff(ip: string, to: string, now: number): void {
    this.handedOff.set(ip, { to, untilMs: now + this.graceMs });
  }

  /** The agent `ip` was handed over to within the grace, if it still stands (see {@link isHandedOff}). */
  handedOffTo(ip: string, now: number): string | undefined {
    return this.isHandedOff(ip, now) ? this.handedOff.get(ip)?.to : undefined;
  }

  /**
   * True while `ip` was handed over to another authority within the grace, unless that one crashed
   * since (in a change of the view known whole): the address is then taken over from it again, by the
   * reports of what the others hold (see {@link takeOverOf}).
   */
  isHandedOff(ip: string, now: number): boolean {
    const handedOff = this.handedOff.get(ip);
    if (handedOff === undefined) return false;
    const { to, untilMs } = handedOff;
    if (now < untilMs && (this.isAlive(to) || this.crashOf(to, now) === undefined)) return true;
    this.handedOff.delete(ip);
    return false;
  }

  /** Forgets the hand-overs whose grace is over. */
  sweep(now: number): void {
    for (const [ip, { untilMs }] of this.handedOff) if (now >= untilMs) this.handedOff.delete(ip);
    for (const [id, leaver] of this.leavers) if (now >= leaver.atMs + this.graceMs) this.leavers.delete(id);
  }
}

/**
 * Who was the authority of an address this agent owns after its view changed from `before` to `after`
 * (undefined: this agent itself). After a shrink, the address's owner before. A view that grew moves
 * addresses only to the newcomers, so an address of this agent's there was its own before, unless the
 * view before was partial: a joining agent learns of the others one by one (a view of itself alone, then
 * of two…), and a healed partition adds agents this one did not see. The cluster's authority before was
 * then the address's owner without this agent, its next agent clockwise in the view after. Where the
 * owner before is gone from the view after, it is that one still (crashed or left: see
 * {@link IpHandOvers.takeOverOf}).
 */
export function previousAuthorityOf(
  selfId: string,
  before: Assignment,
  after: Assignment,
): (ip: string) => string | undefined {
  const grew = after.agents.some(({ id }) => !before.has(id));
  return (ip) => {
    const owner = before.agents.length > 1 ? before.ownerOfRareKey(ip) : undefined;
    const previous = owner !== undefined && (!grew || !after.has(owner)) ? owner : after.successors(ip, 1)[0];
    return previous === selfId ? undefined : previous;
  };
}

/**
 * The authority of an address among `returned`, the agents back in this agent's view (now `after`) as the
 * same life — the other side of a partition that healed, or one suspected wrongly —: the one owning it
 * in a view of them alone, the view they had while this agent did not see them, where they may have
 * granted there (undefined: none of them, or this agent).
 */
export function returnedAuthorityOf(
  selfId: string,
  after: Assignment,
  returned: readonly string[],
): ((ip: string) => string | undefined) | undefined {
  if (returned.length === 0) return undefined;
  const among = new Set(returned);
  return (ip) => {
    const owner = after.ownerOfRareKey(ip);
    const found = among.has(owner)
      ? owner
      : after.successors(ip, after.agents.length).find((id) => among.has(id));
    return found === selfId ? undefined : found;
  };
}

/** `handOver`, said `ageMs` ago: its durations `ageMs` shorter. */
export function aged(handOver: IpHandOver, ageMs: number): IpHandOver {
  const left = (ms: number) => Math.max(0, ms - ageMs);
  return {
    held: handOver.held,
    untilMs: left(handOver.untilMs),
    ...(handOver.holdForMs ? { holdForMs: left(handOver.holdForMs) } : {}),
    ...(handOver.startsFor
      ? { startsFor: new Map([...handOver.startsFor].map(([agent, ms]) => [agent, left(ms)])) }
      : {}),
    blockedForMs: left(handOver.blockedForMs),
    spacedForMs: left(handOver.spacedForMs),
  };
}

/** Two hand-overs of one address as one: every agent's requests, the longest of each wait. */
function merged(a: IpHandOver | undefined, b: IpHandOver): IpHandOver {
  if (a === undefined) return b;
  const held = new Map(a.held);
  for (const [agent, count] of b.held) held.set(agent, (held.get(agent) ?? 0) + count);
  // An agent's starts as the longer of the two says (unsaid: until the hand-over's end).
  const startsFor = new Map<string, number>();
  for (const agent of held.keys()) {
    const startsOf = (h: IpHandOver) => (h.held.has(agent) ? (h.startsFor?.get(agent) ?? h.untilMs) : 0);
    startsFor.set(agent, Math.max(startsOf(a), startsOf(b)));
  }
  return {
    held,
    untilMs: Math.max(a.untilMs, b.untilMs),
    startsFor,
    blockedForMs: Math.max(a.blockedForMs, b.blockedForMs),
    spacedForMs: Math.max(a.spacedForMs, b.spacedForMs),
    holdForMs: Math.max(a.holdForMs ?? 0, b.holdForMs ?? 0),
  };
}

/** True when `a` and `b` hold the same agents. */
export function sameAgents(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const id of a) if (!b.has(id)) return false;
  return true;
}
