import type { Clock } from "../clock.js";
import type { HeartbeatTarget, RemoteHeartbeat } from "../failure-detector/index.js";
import type {
  AgentLoad,
  HeartbeatReply,
  MemberFigures,
  PeerClient,
  PeerClientPool,
} from "../transport/index.js";
import { fromWireMember, toWireMember } from "./members.js";
import type { Partitioning } from "./ownership.js";

/** What {@link heartbeatSender} needs. */
export interface HeartbeatSenderDeps {
  readonly clock: Clock;
  /** The client of a peer's address (a {@link PeerClientPool}). */
  readonly peers: { get(address: string): Pick<PeerClient, "heartbeat" | "streamHeartbeat"> };
  /** Deadline of one heartbeat call, ms. */
  readonly deadlineMs: number;
  /** How this agent spreads URLs over the agents, told to every peer (who refuses another). */
  readonly partitioning: Partitioning;
  /** This agent's load now, carried by every heartbeat. */
  readonly load: () => AgentLoad;
  /** The members' fetch totals this agent knows, carried by every heartbeat. */
  readonly figures: () => MemberFigures[];
  /** A reply (its load measured no earlier than local time `sentAtMs`). */
  readonly onReply: (
    fromId: string,
    reply: Pick<HeartbeatReply, "load" | "figures">,
    sentAtMs: number,
  ) => void;
}

/**
 * The failure detector's way of sending a heartbeat over gRPC: a known member gets it on one
 * long-lived stream, a seed (whose id is not known yet) a unary call; the reply's load goes to
 * `onReply`, with the figures it gossips.
 */
export function heartbeatSender(
  deps: HeartbeatSenderDeps,
): (target: HeartbeatTarget, heartbeat: RemoteHeartbeat, signal: AbortSignal) => Promise<RemoteHeartbeat> {
  return async (target, heartbeat, signal) => {
    const { clock } = deps;
    // A reply's load is measured after this moment: that, not its (possibly late) arrival, is how fresh
    // it is for termination detection.
    const sentAtMs = clock.now();
    const request = {
      from: toWireMember(heartbeat.from, sentAtMs),
      members: heartbeat.entries.map((entry) => toWireMember(entry, sentAtMs)),
      load: deps.load(),
      figures: deps.figures(),
      unanswered: heartbeat.unanswered === true,
      partitioning: deps.partitioning,
    };
    // The detector's signal bounds each heartbeat (one interval, longer when joining).
    const callOptions = { signal, deadlineMs: deps.deadlineMs };
    const client = deps.peers.get(target.address);
    const reply = await (target.id === undefined
      ? client.heartbeat(request, callOptions)
      : client.streamHeartbeat(request, callOptions));
    deps.onReply(reply.from.id, reply, sentAtMs);
    const previousIncarnation = reply.previousIncarnation
      ? { previousIncarnation: reply.previousIncarnation }
      : {};
    return {
      from: fromWireMember(reply.from),
      entries: reply.members.map(fromWireMember),
      ...previousIncarnation,
    };
  };
}
