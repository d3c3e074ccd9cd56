import { ErrorCode, UbiError } from "../errors.js";

/**
 * How an agent sees a member: `alive` (heard directly within the suspicion timeout), `suspected` (not
 * heard directly for that long, or only known by gossip so far) or `left` (announced a graceful leave).
 */
export type MemberStatus = "alive" | "suspected" | "left";

/** A member as gossiped between agents: everything but local timing. */
export interface GossipEntry {
  /** The agent's unique identifier. */
  readonly id: string;
  /** Where the agent's transport listens, `host:port`. */
  readonly address: string;
  /** The agent's capacity (a positive integer), which scales its share of hosts. */
  readonly capacity: number;
  /** Bumped on every start (startup time in ms) so stale gossip never overrides a newer life. */
  readonly incarnation: number;
  /** The sender's view of the member's status. */
  readonly status: MemberStatus;
}

/** A member in the local view: a gossip entry plus when this agent last heard of it. */
export interface MemberEntry extends GossipEntry {
  /** Local clock time (ms) of the last direct contact, or of first learning of it by gossip. */
  readonly lastHeardMs: number;
}

/** A heartbeat or its answer: the sender's own entry and its whole gossip table. */
export interface RemoteHeartbeat {
  /** The sender's own entry. */
  readonly from: GossipEntry;
  /** The sender's gossip table (may include `from` again). */
  readonly entries: readonly GossipEntry[];
  /**
   * Set on a request whose sender's last heartbeat to the receiver went unanswered: the receiver then
   * asks the sender too, so the sender hears it when only one direction of the pair is slow or lost.
   */
  readonly unanswered?: boolean;
  /**
   * On an answer: the incarnation the answering agent held the asker's id at, alive or suspected, when
   * older than the asker's (undefined: none) — the asker restarted before that agent found it gone.
   */
  readonly previousIncarnation?: number;
}

const STATUSES: ReadonlySet<string> = new Set<MemberStatus>(["alive", "suspected", "left"]);

/**
 * Checks an entry received from a peer and returns a clean copy; throws {@link ErrorCode.BadMessage}
 * when a field is missing or out of range, so one bad peer cannot corrupt the view.
 */
export function checkGossipEntry(entry: unknown): GossipEntry {
  const { id, address, capacity, incarnation, status } = (entry ?? {}) as Record<keyof GossipEntry, unknown>;
  const bad = (what: string) =>
    new UbiError(ErrorCode.BadMessage, `gossip entry ${JSON.stringify(id)}: ${what}`);
  if (typeof id !== "string" || id.length === 0) throw bad("id must be a non-empty string");
  if (typeof address !== "string" || address.length === 0) throw bad("address must be a non-empty string");
  if (typeof capacity !== "number" || !Number.isSafeInteger(capacity) || capacity < 1) {
    throw bad("capacity must be a positive integer");
  }
  if (typeof incarnation !== "number" || !Number.isSafeInteger(incarnation) || incarnation < 0) {
    throw bad("incarnation must be a non-negative integer");
  }
  if (typeof status !== "string" || !STATUSES.has(status))
    throw bad(`unknown status ${JSON.stringify(status)}`);
  return { id, address, capacity, incarnation, status: status as MemberStatus };
}
