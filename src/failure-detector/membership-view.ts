import { ErrorCode, invalidArgument, UbiError } from "../errors.js";
import { checkGossipEntry, type GossipEntry, type MemberEntry, type MemberStatus } from "./member.js";

/** Who this agent is: the fixed `self` entry of a {@link MembershipView}. */
export interface SelfIdentity {
  /** This agent's unique identifier. */
  readonly id: string;
  /** Where this agent's transport listens, `host:port`. */
  readonly address: string;
  /** This agent's capacity, a positive integer. @default 1 */
  readonly capacity?: number;
  /** This life's incarnation, conventionally the startup time in ms. */
  readonly incarnation: number;
}

/** What a {@link MembershipView.merge} did. */
export interface MergeResult {
  /** True when the alive set (ids, addresses or capacities) changed. */
  readonly aliveChanged: boolean;
  /** Ids of gossip entries ignored because they name an alive member at another address. */
  readonly conflicts: readonly string[];
  /**
   * Members alive here whose incarnation rose (a refutation adds 1, a restart its predecessor's
   * lifetime), with the incarnation they had: a restart not yet found gone shows only so.
   */
  readonly risen: readonly RisenIncarnation[];
  /**
   * True when an entry named this agent's id not gone at an incarnation older than this life's first:
   * the sender still held its previous life alive, so this agent restarted before it was found gone.
   */
  readonly previousLifeSeen: boolean;
}

/** A member alive here whose incarnation rose (see {@link MergeResult.risen}). */
export interface RisenIncarnation {
  readonly id: string;
  /** Its incarnation before. */
  readonly before: number;
  /** Its incarnation now. */
  readonly after: number;
}

type Member = { -readonly [K in keyof MemberEntry]: MemberEntry[K] };

/**
 * The gossip table of one agent: every member it knows with status, incarnation and last contact.
 * Only direct contact makes a member alive; gossip introduces members (as suspected, to be pinged),
 * carries newer incarnations and leaves, and never lets a stale entry override a newer one.
 */
export class MembershipView {
  private readonly members = new Map<string, Member>();
  /** Local clock time each member now suspected here became so (swept, or heard of by gossip only). */
  private readonly suspectedAtMs = new Map<string, number>();
  private readonly me: Member;
  /** This life's incarnation at its start (refutations raise the current one). */
  private readonly firstIncarnation: number;

  constructor(self: SelfIdentity) {
    const capacity = self.capacity ?? 1;
    if (typeof self.id !== "string" || self.id.length === 0) invalidArgument("self.id must be non-empty");
    if (typeof self.address !== "string" || self.address.length === 0) {
      invalidArgument("self.address must be non-empty");
    }
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      invalidArgument("self.capacity must be a positive integer");
    if (!Number.isSafeInteger(self.incarnation) || self.incarnation < 0) {
      invalidArgument("self.incarnation must be a non-negative integer");
    }
    this.me = { ...self, capacity, status: "alive", lastHeardMs: 0 };
    this.firstIncarnation = self.incarnation;
    this.members.set(self.id, this.me);
  }

  /** This agent's own entry. */
  get self(): MemberEntry {
    return { ...this.me };
  }

  /** A copy of the entry of member `id`, if known. */
  get(id: string): MemberEntry | undefined {
    const member = this.members.get(id);
    return member && { ...member };
  }

  /** Every known member (self included, left ones too), sorted by id. */
  entries(): MemberEntry[] {
    return [...this.members.values()].map((member) => ({ ...member })).sort(byId);
  }

  /** The alive members (self included while it has not left), sorted by id. */
  alive(): MemberEntry[] {
    return this.entries().filter((member) => member.status === "alive");
  }

  /**
   * Local clock time the latest suspicion still standing began: when a member now suspected here was
   * swept, or heard of by gossip only (−∞ when none is suspected). A live agent left out of the alive
   * set can only be one of these, and it answers within a suspicion timeout or two.
   */
  lastSuspicionMs(): number {
    let latest = Number.NEGATIVE_INFINITY;
    for (const [id, atMs] of this.suspectedAtMs)
      if (this.members.get(id)?.status === "suspected") latest = Math.max(latest, atMs);
    return latest;
  }

  /** The table to gossip: every entry without local timing. */
  gossip(): GossipEntry[] {
    return [...this.members.values()].map(({ id, address, capacity, incarnation, status }) => ({
      id,
      address,
      capacity,
      incarnation,
      status,
    }));
  }

  /**
   * Merges a peer's table. The entry with id `fromId` is the peer itself, heard directly: it becomes
   * alive (or left). Throws {@link ErrorCode.IdConflict} — merging nothing — when that id is alive here
   * at a different address, so the transport can refuse the newcomer; {@link ErrorCode.BadMessage} when
   * an entry is malformed or the sender's own entry is missing.
   */
  merge(remoteEntries: readonly GossipEntry[], fromId: string, nowMs: number): MergeResult {
    const entries = remoteEntries.map(checkGossipEntry);
    const from = entries.find((entry) => entry.id === fromId);
    if (from === undefined)
      throw new UbiError(ErrorCode.BadMessage, `heartbeat lacks its sender "${fromId}"`);
    const before = this.aliveSignature();
    const incarnations = new Map<string, number>();
    for (const member of this.members.values())
      if (member.status === "alive" && member !== this.me) incarnations.set(member.id, member.incarnation);
    this.heardDirectly(from, nowMs);
    const conflicts: string[] = [];
    let previousLifeSeen = false;
    for (const entry of entries) {
      if (entry === from) continue;
      if (entry.id === this.me.id) {
        previousLifeSeen ||= this.isPreviousLife(entry.incarnation, entry.status);
        this.refute(entry);
      } else if (!this.mergeGossip(entry, nowMs)) conflicts.push(entry.id);
    }
    const risen: RisenIncarnation[] = [];
    for (const [id, incarnation] of incarnations) {
      const member = this.members.get(id);
      if (member && member.status === "alive" && member.incarnation > incarnation)
        risen.push({ id, before: incarnation, after: member.incarnation });
    }
    return { aliveChanged: this.aliveSignature() !== before, conflicts, risen, previousLifeSeen };
  }

  /**
   * True when `incarnation`, said of this agent's id with `status`, is of a life before this one, not
   * gone where it was said (see {@link MergeResult.previousLifeSeen}).
   */
  isPreviousLife(incarnation: number, status: MemberStatus = "alive"): boolean {
    return status !== "left" && incarnation < this.firstIncarnation;
  }

  /**
   * The incarnation member `id` had here, alive or suspected (not gone), when older than `incarnation`:
   * what a heartbeat of `id` at `incarnation` replaces (undefined: nothing, or a newer or equal one).
   */
  olderLife(id: string, incarnation: number): number | undefined {
    const member = this.members.get(id);
    if (member === undefined || member === this.me || member.status === "left") return undefined;
    return member.incarnation < incarnation ? member.incarnation : undefined;
  }

  /**
   * Suspects alive members not heard for `suspectAfterMs` and forgets suspected or departed ones not
   * heard for `forgetAfterMs`. Returns true when the alive set changed.
   */
  sweep(nowMs: number, suspectAfterMs: number, forgetAfterMs: number): boolean {
    let changed = false;
    this.me.lastHeardMs = nowMs;
    for (const member of this.members.values()) {
      if (member === this.me) continue;
      const silentMs = nowMs - member.lastHeardMs;
      if (member.status === "alive" && silentMs >= suspectAfterMs) {
        member.status = "suspected";
        this.suspectedAtMs.set(member.id, nowMs);
        changed = true;
      } else if (member.status !== "alive" && silentMs >= forgetAfterMs) {
        this.members.delete(member.id);
        this.suspectedAtMs.delete(member.id);
      }
    }
    return changed;
  }

  /**
   * Takes in one entry heard of indirectly (another agent named it): as gossip, so an unknown member is
   * suspected until it answers. Returns true when the alive set changed.
   */
  introduce(remote: GossipEntry, nowMs: number): boolean {
    const entry = checkGossipEntry(remote);
    if (entry.id === this.me.id) return false;
    const before = this.aliveSignature();
    this.mergeGossip(entry, nowMs);
    return this.aliveSignature() !== before;
  }

  /** Marks self as left, to be gossiped; returns true when that changed the alive set. */
  leave(): boolean {
    if (this.me.status === "left") return false;
    this.me.status = "left";
    return true;
  }

  /** The sender of a heartbeat or answer: direct evidence, unless it conflicts or is a stale life. */
  private heardDirectly(entry: GossipEntry, nowMs: number): void {
    if (entry.id === this.me.id) {
      if (entry.address !== this.me.address) throw conflict(entry, this.me);
      return; // a heartbeat from ourselves: nothing to learn
    }
    const local = this.members.get(entry.id);
    if (local === undefined) {
      this.members.set(entry.id, {
        ...entry,
        status: entry.status === "left" ? "left" : "alive",
        lastHeardMs: nowMs,
      });
      return;
    }
    if (local.status === "alive" && local.address !== entry.address) throw conflict(entry, local);
    // An older life still talking, or a message sent before a leave at the same incarnation.
    if (entry.incarnation < local.incarnation) return;
    if (entry.incarnation === local.incarnation && local.status === "left") return;
    this.suspectedAtMs.delete(entry.id);
    Object.assign(local, {
      address: entry.address,
      capacity: entry.capacity,
      incarnation: entry.incarnation,
      status: entry.status === "left" ? "left" : "alive",
      lastHeardMs: nowMs,
    });
  }

  /** Applies one gossiped entry about another member; returns false when it was a conflict. */
  private mergeGossip(entry: GossipEntry, nowMs: number): boolean {
    const local = this.members.get(entry.id);
    if (local === undefined) {
      // Known only by hearsay: suspected until it answers a heartbeat of ours.
      const status: MemberStatus = entry.status === "left" ? "left" : "suspected";
      this.members.set(entry.id, { ...entry, status, lastHeardMs: nowMs });
      if (status === "suspected") this.suspectedAtMs.set(entry.id, nowMs);
      return true;
    }
    if (entry.incarnation > local.incarnation) {
      if (local.status === "alive" && local.address !== entry.address) return false;
      const wasLeft = local.status === "left";
      Object.assign(local, {
        address: entry.address,
        capacity: entry.capacity,
        incarnation: entry.incarnation,
      });
      // A new life of a member suspected here, known by gossip only: suspected afresh until it answers.
      if (local.status === "suspected" && entry.status !== "left") this.suspectedAtMs.set(entry.id, nowMs);
      if (entry.status === "left") Object.assign(local, { status: "left", lastHeardMs: nowMs });
      else if (wasLeft) {
        // Restarted.
        Object.assign(local, { status: "suspected", lastHeardMs: nowMs });
        this.suspectedAtMs.set(entry.id, nowMs);
      }
    } else if (
      entry.incarnation === local.incarnation &&
      entry.status === "left" &&
      local.status !== "left"
    ) {
      Object.assign(local, { status: "left", lastHeardMs: nowMs });
    }
    return true;
  }

  /** SWIM-style refutation: someone believes this life suspected or gone; outbid it. */
  private refute(entry: GossipEntry): void {
    if (this.me.status === "alive" && entry.status !== "alive" && entry.incarnation >= this.me.incarnation) {
      this.me.incarnation = entry.incarnation + 1;
    }
  }

  private aliveSignature(): string {
    return this.alive()
      .map((member) => `${member.id}\u0000${member.address}\u0000${member.capacity}`)
      .join("\u0001");
  }
}

function byId(a: MemberEntry, b: MemberEntry): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function conflict(claim: GossipEntry, holder: GossipEntry): UbiError {
  return new UbiError(
    ErrorCode.IdConflict,
    `id "${claim.id}" is already used by a live agent at ${holder.address} (claimed from ${claim.address})`,
  );
}
