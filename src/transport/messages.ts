/**
 * TypeScript shapes of the messages in `proto/ubicrawl.proto`, written by hand to match the loader
 * options (camelCase fields, 64-bit integers as numbers, enums as names, defaults filled in).
 * Incoming messages have these shapes only after validation (see `validate.ts`).
 */

/** How an agent regards a member (`ubicrawl.v1.MemberStatus`, without the unspecified value). */
export type MemberStatus = "ALIVE" | "SUSPECTED" | "LEFT";

/** The member statuses, in proto order. */
export const MEMBER_STATUSES: readonly MemberStatus[] = ["ALIVE", "SUSPECTED", "LEFT"];

/** One entry of the membership table (`ubicrawl.v1.Member`). */
export interface Member {
  /** Unique agent id, 1–128 chars of `[A-Za-z0-9._-]`. */
  id: string;
  /** The agent's gRPC address, `host:port`. */
  address: string;
  /** Relative capacity, at least 1. */
  capacity: number;
  /** Restart / refutation counter; the higher one wins. */
  incarnation: number;
  /** How the sender regards this member. */
  status: MemberStatus;
  /** Milliseconds since the sender last heard of this member. */
  lastHeardMsAgo: number;
}

/** Termination-detection counters (`ubicrawl.v1.AgentLoad`). */
export interface AgentLoad {
  /** Nothing queued and nothing in flight. */
  idle: boolean;
  /** URL batches sent and acknowledged. */
  urlBatchesSent: number;
  /** URL batches received and accepted (retries counted once). */
  urlBatchesReceived: number;
  /** Pages fetched. */
  pagesFetched: number;
  /** URLs waiting in the frontier. */
  queuedUrls: number;
}

/** `Join` request: a newcomer announces itself. */
export interface JoinRequest {
  /** The newcomer. */
  member: Member;
}

/** `Join` reply: the whole membership table. */
export interface JoinReply {
  /** Every member the receiver knows. */
  members: Member[];
}

/** `Heartbeat` request: liveness plus gossip. */
export interface HeartbeatRequest {
  /** The sender. */
  from: Member;
  /** The sender's view of the membership. */
  members: Member[];
  /** The sender's counters. */
  load: AgentLoad;
  /** The sender's last heartbeat to the receiver went unanswered: the receiver should ask it too. */
  unanswered?: boolean;
}

/** `Heartbeat` reply: the receiver's view and counters. */
export interface HeartbeatReply {
  /** The receiver's view of the membership. */
  members: Member[];
  /** The receiver's counters. */
  load: AgentLoad;
  /** The receiver's own entry. */
  from: Member;
}

/** A heartbeat request or reply on the `HeartbeatStream` rpc: the unary message and its number. */
export type Sequenced<T> = T & {
  /** Matches a reply to its request on one stream; at least 1. */
  sequence: number;
};

/** A discovered URL and its link depth (`ubicrawl.v1.DiscoveredUrl`). */
export interface DiscoveredUrl {
  /** Absolute URL, at most 4096 chars. */
  url: string;
  /** Link distance from a seed. */
  depth: number;
  /** Failed attempts that may pass so far (0 when absent on the wire). */
  attempts?: number;
}

/** `SubmitUrls` request (`ubicrawl.v1.UrlBatch`). */
export interface UrlBatch {
  /** Unique per sender, so retries are idempotent; at most 128 chars. */
  batchId: string;
  /** The sending agent's id. */
  fromId: string;
  /** At most 10,000 URLs. */
  urls: DiscoveredUrl[];
}

/** `SubmitUrls` reply (`ubicrawl.v1.UrlBatchAck`). */
export interface UrlBatchAck {
  /** Owned and queued as new. */
  accepted: number;
  /** Not owned by the receiver, passed on. */
  forwarded: number;
  /** Already seen, dropped. */
  duplicates: number;
}

/** What a hand-over says of a host's crawl (`ubicrawl.v1.HandOverStatus`, without the unspecified value). */
export type HandOverStatus = "GRANTED" | "PASSED" | "NOT_HELD" | "NOT_YOURS" | "LATER";

/** The hand-over statuses, in proto order. */
export const HAND_OVER_STATUSES: readonly HandOverStatus[] = [
  "GRANTED",
  "PASSED",
  "NOT_HELD",
  "NOT_YOURS",
  "LATER",
];

/** One host of a `ClaimHosts` request. */
export interface HostClaim {
  /** The host key (`name:port`). */
  host: string;
  /** Done fingerprints already received for it from the asked agent. */
  skip: number;
}

/** `ClaimHosts` request. */
export interface ClaimRequest {
  /** The claimant. */
  claimant: Member;
  /** At most 1,000 hosts. */
  hosts: HostClaim[];
}

/** One host handed over (or not): a `ClaimHosts` answer or a pushed hand-over. */
export interface HostHandOver {
  /** The host key. */
  host: string;
  status: HandOverStatus;
  /** PASSED: who holds the crawl now; NOT_YOURS: the owner in the sender's view; else null. */
  holder: Member | null;
  /** Done fingerprints, 8 bytes big-endian each. */
  done: Uint8Array;
  /** More done fingerprints follow. */
  more: boolean;
  /** Pages the sender fetched of the host. */
  pagesFetched: number;
  /** Why the host was given up; empty when it was not. */
  abandoned: string;
}

/** `ClaimHosts` reply: one entry per claimed host, same order. */
export interface ClaimReply {
  hosts: HostHandOver[];
}

/** `HandOverHosts` request: hosts pushed by an agent that leaves. */
export interface HandOverRequest {
  from: Member;
  hosts: HostHandOver[];
}

/** `HandOverHosts` reply. */
export interface HandOverReply {
  /** Hosts taken in. */
  taken: number;
}

/** `GetStats` request. */
export interface StatsRequest {
  /** Also gather the stats of every live member. */
  cluster: boolean;
}

/** One agent's view of one peer (`ubicrawl.v1.PeerView`). */
export interface PeerView {
  /** The peer's id. */
  id: string;
  /** The peer's `host:port`. */
  address: string;
  /** The peer's status. */
  status: MemberStatus;
  /** Milliseconds since last heard. */
  lastHeardMsAgo: number;
}

/** URL exchange counters with one peer (`ubicrawl.v1.PeerTraffic`). */
export interface PeerTraffic {
  /** The peer's id. */
  peerId: string;
  /** URLs sent to the peer. */
  urlsSent: number;
  /** URLs received from the peer. */
  urlsReceived: number;
  /** Batches sent to the peer. */
  batchesSent: number;
  /** Batches received from the peer. */
  batchesReceived: number;
}

/** Hosts waiting for one reason (`ubicrawl.v1.WaitingHosts`). */
export interface WaitingHostsEntry {
  /** robots, retry, held, hand-over or error. */
  reason: string;
  hosts: number;
  /** Milliseconds until the first of them is visited again. */
  nextInMs: number;
}

/** One agent's partition statistics (`ubicrawl.v1.AgentStats`). */
export interface AgentStats {
  /** The agent's id. */
  id: string;
  /** The agent's `host:port`. */
  address: string;
  /** The agent's capacity. */
  capacity: number;
  /** Replicas on the circle. */
  replicas: number;
  /** Fraction of the circle owned, 0 to 1. */
  circleShare: number;
  /** The agent's view of the membership. */
  view: PeerView[];
  /** Hosts owned among those known. */
  hostsOwned: number;
  /** Hosts heard of. */
  hostsKnown: number;
  /** Owned hosts being visited. */
  hostsActive: number;
  /** Owned hosts exhausted. */
  hostsDone: number;
  /** Pages fetched. */
  pagesFetched: number;
  /** Body bytes fetched. */
  bytesFetched: number;
  /** URLs in the frontier. */
  queuedUrls: number;
  /** Per-peer exchange counters. */
  peers: PeerTraffic[];
  /** URLs sent to other agents / pages fetched (each URL once). */
  communicationOverhead: number;
  /** Links found to hosts other agents own; a URL among them already handed away is not sent again. */
  linksToOtherAgents: number;
  /** Pages fetched by previous owners of its hosts, learnt from hand-overs (never fetched again here). */
  pagesRecovered: number;
  /** Error counts by error class. */
  errors: Record<string, number>;
  /** Recent fetch throughput. */
  pagesPerSecond: number;
  /** Milliseconds since start. */
  uptimeMs: number;
  /** Nothing queued and nothing in flight. */
  idle: boolean;
  /** Paused by an operator. */
  paused: boolean;
  /** Owned hosts with queued URLs waiting for a crashed previous owner to come back. */
  hostsHeld: number;
  /** Crashed agents whose hosts are held. */
  heldFor: string[];
  /** Pages fetched since the agent's process started (`pagesFetched`: since the crawl began). */
  pagesFetchedThisRun: number;
  /** How the answering agent regards this one: ALIVE when answered live, else last known figures. */
  status: MemberStatus;
  /** Milliseconds since these figures were measured (0: live). */
  reportedMsAgo: number;
  /** Owned hosts with queued URLs that wait, by reason. */
  waiting: WaitingHostsEntry[];
}

/** `GetStats` reply. */
export interface StatsReply {
  /** One entry per agent that answered. */
  agents: AgentStats[];
}

/** Operator commands (`ubicrawl.v1.ControlAction`, without the unspecified value). */
export type ControlAction = "PAUSE" | "RESUME" | "LEAVE" | "BLACKLIST_ADD" | "BLACKLIST_REMOVE";

/** The control actions, in proto order. */
export const CONTROL_ACTIONS: readonly ControlAction[] = [
  "PAUSE",
  "RESUME",
  "LEAVE",
  "BLACKLIST_ADD",
  "BLACKLIST_REMOVE",
];

/** `Control` request. */
export interface ControlRequest {
  /** What to do. */
  action: ControlAction;
  /** A host pattern for the blacklist actions; empty otherwise. */
  argument: string;
}

/** `Control` reply. */
export interface ControlReply {
  /** The command was applied. */
  ok: boolean;
  /** Human-readable outcome. */
  message: string;
}

/** What each agent serves; the server validates every request before calling these. */
export interface AgentServiceHandlers {
  /** A newcomer joins; throw `UbiError(IdConflict)` to refuse it. */
  join(request: JoinRequest): Promise<JoinReply>;
  /** A peer's heartbeat with gossip. */
  heartbeat(request: HeartbeatRequest): Promise<HeartbeatReply>;
  /** A batch of URLs for hosts this agent (probably) owns. */
  submitUrls(request: UrlBatch): Promise<UrlBatchAck>;
  /** A new owner claims hosts (hand-over, page recovery). */
  claimHosts(request: ClaimRequest): Promise<ClaimReply>;
  /** Hosts pushed by an agent that leaves. */
  handOverHosts(request: HandOverRequest): Promise<HandOverReply>;
  /** Statistics query. */
  getStats(request: StatsRequest): Promise<StatsReply>;
  /** Operator command. */
  control(request: ControlRequest): Promise<ControlReply>;
}
