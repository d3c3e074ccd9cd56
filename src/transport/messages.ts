/**
 * The messages of `proto/ubicrawl.proto` as the rest of the code sees them: the types generated from
 * the proto (`npm run proto:types` writes `generated/`, with the loader options: camelCase fields,
 * 64-bit integers as numbers, enums as names, defaults filled in), narrowed to what validation
 * guarantees: no unspecified enum value, required messages present. The proto's comments document
 * every field (they are in the generated types too). Incoming messages have these shapes only after
 * validation (see `validate.ts`).
 */

import type { ChangeFrequency } from "../change-frequency.js";
import type { AgentControlOutcome__Output } from "./generated/ubicrawl/v1/AgentControlOutcome.js";
import type { AgentLoad__Output } from "./generated/ubicrawl/v1/AgentLoad.js";
import type { AgentStats__Output } from "./generated/ubicrawl/v1/AgentStats.js";
import type { BlacklistEntry__Output } from "./generated/ubicrawl/v1/BlacklistEntry.js";
import type { BlacklistRestored__Output } from "./generated/ubicrawl/v1/BlacklistRestored.js";
import type { BlacklistSync__Output } from "./generated/ubicrawl/v1/BlacklistSync.js";
import type { BusyAddress__Output } from "./generated/ubicrawl/v1/BusyAddress.js";
import type { ClaimReply__Output } from "./generated/ubicrawl/v1/ClaimReply.js";
import type { ClaimRequest__Output } from "./generated/ubicrawl/v1/ClaimRequest.js";
import {
  type ControlAction__Output,
  ControlAction as ControlActionEnum,
} from "./generated/ubicrawl/v1/ControlAction.js";
import type { ControlReply__Output } from "./generated/ubicrawl/v1/ControlReply.js";
import type { ControlRequest__Output } from "./generated/ubicrawl/v1/ControlRequest.js";
import type { DigestCheck__Output } from "./generated/ubicrawl/v1/DigestCheck.js";
import type { DigestSettlement__Output } from "./generated/ubicrawl/v1/DigestSettlement.js";
import type { DigestSettlements__Output } from "./generated/ubicrawl/v1/DigestSettlements.js";
import {
  type DigestState__Output,
  DigestState as DigestStateEnum,
} from "./generated/ubicrawl/v1/DigestState.js";
import type { DigestVerdict__Output } from "./generated/ubicrawl/v1/DigestVerdict.js";
import type { DiscoveredUrl__Output } from "./generated/ubicrawl/v1/DiscoveredUrl.js";
import type { HandOverReply__Output } from "./generated/ubicrawl/v1/HandOverReply.js";
import type { HandOverRequest__Output } from "./generated/ubicrawl/v1/HandOverRequest.js";
import {
  type HandOverStatus__Output,
  HandOverStatus as HandOverStatusEnum,
} from "./generated/ubicrawl/v1/HandOverStatus.js";
import type { HeartbeatReply__Output } from "./generated/ubicrawl/v1/HeartbeatReply.js";
import type { HeartbeatRequest__Output } from "./generated/ubicrawl/v1/HeartbeatRequest.js";
import type { HostClaim__Output } from "./generated/ubicrawl/v1/HostClaim.js";
import type { HostHandOver__Output } from "./generated/ubicrawl/v1/HostHandOver.js";
import type { IpAsk__Output } from "./generated/ubicrawl/v1/IpAsk.js";
import type { IpCrawlDelay__Output } from "./generated/ubicrawl/v1/IpCrawlDelay.js";
import type { IpGrant__Output } from "./generated/ubicrawl/v1/IpGrant.js";
import {
  type IpGrantKind__Output,
  IpGrantKind as IpGrantKindEnum,
} from "./generated/ubicrawl/v1/IpGrantKind.js";
import type { IpHandOver__Output } from "./generated/ubicrawl/v1/IpHandOver.js";
import type { IpHeld__Output } from "./generated/ubicrawl/v1/IpHeld.js";
import type { IpRefusal__Output } from "./generated/ubicrawl/v1/IpRefusal.js";
import type { IpRelease__Output } from "./generated/ubicrawl/v1/IpRelease.js";
import type { JoinReply__Output } from "./generated/ubicrawl/v1/JoinReply.js";
import type { JoinRequest__Output } from "./generated/ubicrawl/v1/JoinRequest.js";
import type { Member__Output } from "./generated/ubicrawl/v1/Member.js";
import type { MemberFigures__Output } from "./generated/ubicrawl/v1/MemberFigures.js";
import {
  type MemberStatus__Output,
  MemberStatus as MemberStatusEnum,
} from "./generated/ubicrawl/v1/MemberStatus.js";
import type { PageSchedule__Output } from "./generated/ubicrawl/v1/PageSchedule.js";
import type { PayloadOriginal__Output } from "./generated/ubicrawl/v1/PayloadOriginal.js";
import type { PeerTraffic__Output } from "./generated/ubicrawl/v1/PeerTraffic.js";
import type { PeerView__Output } from "./generated/ubicrawl/v1/PeerView.js";
import type { RevisitStats__Output } from "./generated/ubicrawl/v1/RevisitStats.js";
import type { StatsReply__Output } from "./generated/ubicrawl/v1/StatsReply.js";
import type { StatsRequest__Output } from "./generated/ubicrawl/v1/StatsRequest.js";
import type { UrlBatch__Output } from "./generated/ubicrawl/v1/UrlBatch.js";
import type { UrlBatchAck__Output } from "./generated/ubicrawl/v1/UrlBatchAck.js";
import type { WaitingHosts__Output } from "./generated/ubicrawl/v1/WaitingHosts.js";

/** An enum's names without its `..._UNSPECIFIED` zero value, which validation refuses. */
type Specified<E> = Exclude<E, `${string}_UNSPECIFIED`>;

/** A generated message type with the fields in `R` narrowed. */
type With<T, R> = Omit<T, keyof R> & R;

/** An enum's specified names, in proto order. */
function specified<E extends string>(values: Record<string, E>): readonly Specified<E>[] {
  return Object.values(values).filter((value): value is Specified<E> => !value.endsWith("_UNSPECIFIED"));
}

/** How an agent regards a member (`ubicrawl.v1.MemberStatus`). */
export type MemberStatus = Specified<MemberStatus__Output>;
/** The member statuses, in proto order. */
export const MEMBER_STATUSES: readonly MemberStatus[] = specified(MemberStatusEnum);

/** One entry of the membership table (`ubicrawl.v1.Member`). */
export type Member = With<Member__Output, { status: MemberStatus }>;

/** Termination-detection counters (`ubicrawl.v1.AgentLoad`). */
export type AgentLoad = AgentLoad__Output;

/** A member's fetch totals as gossiped with heartbeats (`ubicrawl.v1.MemberFigures`). */
export type MemberFigures = MemberFigures__Output;

/** `Join` request: a newcomer announces itself. */
export type JoinRequest = With<JoinRequest__Output, { member: Member }>;

/** `Join` reply: the whole membership table. */
export type JoinReply = With<JoinReply__Output, { members: Member[] }>;

/** `Heartbeat` request (its stream form adds a `sequence`: {@link Sequenced}). */
export type HeartbeatRequest = With<
  Omit<HeartbeatRequest__Output, "sequence">,
  {
    from: Member;
    members: Member[];
    load: AgentLoad;
    unanswered?: boolean;
    partitioning?: "host" | "url";
    figures?: MemberFigures[];
  }
>;

/** `Heartbeat` reply: the receiver's view and counters. */
export type HeartbeatReply = With<
  Omit<HeartbeatReply__Output, "sequence">,
  {
    members: Member[];
    load: AgentLoad;
    from: Member;
    figures?: MemberFigures[];
    /** 0 or unset: none (see the proto). */
    previousIncarnation?: number;
  }
>;

/** A request or reply on a stream rpc (`HeartbeatStream`, `DigestStream`): the unary message and its number. */
export type Sequenced<T> = T & {
  /** Matches a reply to its request on one stream; at least 1. */
  sequence: number;
};

/**
 * A discovered URL, its link depth and its traits (`ubicrawl.v1.DiscoveredUrl`; attempts 0, no sitemap
 * mark, an empty lastmod and an empty changefreq may be left out).
 */
export type DiscoveredUrl = With<
  DiscoveredUrl__Output,
  { attempts?: number; sitemap?: true; lastmod?: string; sitemapFor?: string; changefreq?: ChangeFrequency }
>;

/** `SubmitUrls` request (`ubicrawl.v1.UrlBatch`). */
export type UrlBatch = With<UrlBatch__Output, { urls: DiscoveredUrl[]; keepForOwners?: true }>;

/** `SubmitUrls` reply (`ubicrawl.v1.UrlBatchAck`). */
export type UrlBatchAck = With<UrlBatchAck__Output, { kept?: number }>;

/** What a hand-over says of a host's crawl (`ubicrawl.v1.HandOverStatus`). */
export type HandOverStatus = Specified<HandOverStatus__Output>;
/** The hand-over statuses, in proto order. */
export const HAND_OVER_STATUSES: readonly HandOverStatus[] = specified(HandOverStatusEnum);

/** One host of a `ClaimHosts` request (`ubicrawl.v1.HostClaim`; `skipPages` 0 may be left out). */
export type HostClaim = With<HostClaim__Output, { skipPages?: number }>;

/** `ClaimHosts` request. */
export type ClaimRequest = With<ClaimRequest__Output, { claimant: Member; hosts: HostClaim[] }>;

/**
 * One page's revisit history in a hand-over (`ubicrawl.v1.PageSchedule`; empty strings and 0 for none,
 * a changefreq one of sitemaps.org's values or empty).
 */
export type PageSchedule = With<PageSchedule__Output, { changefreq: ChangeFrequency | "" }>;

/** One host handed over, or not (`ubicrawl.v1.HostHandOver`; no `pages` may be left out). */
export type HostHandOver = With<
  HostHandOver__Output,
  { status: HandOverStatus; holder: Member | null; done: Uint8Array; pages?: PageSchedule[] }
>;

/** `ClaimHosts` reply: one entry per claimed host, same order. */
export type ClaimReply = With<ClaimReply__Output, { hosts: HostHandOver[] }>;

/** `HandOverHosts` request: hosts pushed to their next owner. */
export type HandOverRequest = With<HandOverRequest__Output, { from: Member; hosts: HostHandOver[] }>;

/** `HandOverHosts` reply. */
export type HandOverReply = HandOverReply__Output;

/** `GetStats` request. */
export type StatsRequest = StatsRequest__Output;

/** How one agent sees one peer (`ubicrawl.v1.PeerView`). */
export type PeerView = With<PeerView__Output, { status: MemberStatus }>;

/** URL exchange counters with one peer (`ubicrawl.v1.PeerTraffic`). */
export type PeerTraffic = PeerTraffic__Output;

/** Hosts waiting for one reason (`ubicrawl.v1.WaitingHosts`). */
export type WaitingHostsEntry = WaitingHosts__Output;

/** What a continuous crawl's revisits did (`ubicrawl.v1.RevisitStats`). */
export type RevisitStats = RevisitStats__Output;

/** One IP address among an agent's busiest (`ubicrawl.v1.BusyAddress`). */
export type BusyAddress = BusyAddress__Output;

/** One agent's partition statistics (`ubicrawl.v1.AgentStats`). */
export type AgentStats = With<
  AgentStats__Output,
  {
    view: PeerView[];
    peers: PeerTraffic[];
    errors: Record<string, number>;
    status: MemberStatus;
    waiting: WaitingHostsEntry[];
  }
>;

/** `GetStats` reply. */
export type StatsReply = With<StatsReply__Output, { agents: AgentStats[] }>;

/** Operator commands (`ubicrawl.v1.ControlAction`). */
export type ControlAction = Specified<ControlAction__Output>;
/** The control actions, in proto order. */
export const CONTROL_ACTIONS: readonly ControlAction[] = specified(ControlActionEnum);

/** `Control` request (`cluster`: every live agent, through the one asked). */
export type ControlRequest = With<
  ControlRequest__Output,
  { action: ControlAction; urls?: string[]; cluster?: boolean; force?: boolean; relayed?: boolean }
>;

/** One agent's outcome of a command relayed to the cluster (`ubicrawl.v1.AgentControlOutcome`). */
export type AgentControlOutcome = AgentControlOutcome__Output;

/** `Control` reply (`agents`: with `cluster`, each agent's outcome). */
export type ControlReply = With<ControlReply__Output, { agents?: AgentControlOutcome[] }>;

/** One host blacklist pattern and its last change (`ubicrawl.v1.BlacklistEntry`). */
export type BlacklistEntry = BlacklistEntry__Output;

/** What an agent gave back of hosts taken off the blacklist (`ubicrawl.v1.BlacklistRestored`). */
export type BlacklistRestored = BlacklistRestored__Output;

/**
 * `SyncBlacklist` request and reply: an agent's blacklist entries, and in a reply what the merge gave
 * back of hosts it took off the list.
 */
export type BlacklistSync = With<
  BlacklistSync__Output,
  { entries: BlacklistEntry[]; restored?: BlacklistRestored }
>;

/**
 * `CheckDigests` request: payload digests the receiver owns, asked about by `fromId`, with the claims
 * it settled meanwhile (absent: none). Its stream form adds a `sequence` ({@link Sequenced}).
 */
export type DigestCheck = With<
  Omit<DigestCheck__Output, "sequence">,
  { digests: string[]; settlements?: DigestSettlementMessage[] }
>;

/** What is known of a payload digest (`ubicrawl.v1.DigestState`). */
export type DigestState = Specified<DigestState__Output>;
/** The digest states, in proto order. */
export const DIGEST_STATES: readonly DigestState[] = specified(DigestStateEnum);

/** The response that stored a payload first (`ubicrawl.v1.PayloadOriginal`). */
export type PayloadOriginalMessage = PayloadOriginal__Output;

/** One digest's verdict; `original` is present exactly with `DIGEST_SEEN`. */
export type DigestVerdictMessage = With<
  DigestVerdict__Output,
  { state: DigestState; original: PayloadOriginalMessage | null }
>;

/** `CheckDigests` reply: one verdict per digest asked, in order (its stream form adds a `sequence`). */
export interface DigestVerdicts {
  verdicts: DigestVerdictMessage[];
}

/** One claim's end: `original` null when the claimant could not store the payload. */
export type DigestSettlementMessage = With<
  DigestSettlement__Output,
  { original: PayloadOriginalMessage | null }
>;

/** `SettleDigests` request. */
export type DigestSettlements = With<DigestSettlements__Output, { settlements: DigestSettlementMessage[] }>;

/** `SettleDigests` reply. */
export type DigestSettleAck = Record<string, never>;

/** What an IP authority grants (`ubicrawl.v1.IpGrantKind`). */
export type IpGrantKind = Specified<IpGrantKind__Output>;
/** The grant kinds, in proto order. */
export const IP_GRANT_KINDS: readonly IpGrantKind[] = specified(IpGrantKindEnum);

/** `IpGrants` request: refusals and Crawl-delays taken in first, then releases, then asks answered in order. */
export interface IpRequest {
  fromId: string;
  releases: IpReleaseMessage[];
  refusals: IpRefusal__Output[];
  asks: IpAsk__Output[];
  /** Addresses the sender took over as their authority (absent: none). */
  takeOver?: string[];
  /** Crawl-delays of hosts at the receiver's addresses (absent: none). */
  crawlDelays?: IpCrawlDelay__Output[];
  /** Addresses the sender hands over as it leaves (absent: none). */
  handedOff?: IpHandOffMessage[];
  /** True on the last request of the sender's leave to the receiver (absent: false). */
  leaving?: boolean;
  /**
   * With `leaving`: the agents of the sender's view as it handed over; with `goneAuthority`: its view
   * after that agent left it (absent: none said).
   */
  view?: string[];
  /** The agent gone from the sender's view whose addresses `holdings` are of (absent: none). */
  goneAuthority?: string;
  /** With `goneAuthority`: what the sender may still have in flight at that agent's addresses (absent: none). */
  holdings?: IpHandOffMessage[];
  /** With `goneAuthority`: the sender's last request about that agent (absent: false). */
  holdingsLast?: boolean;
  /** Addresses the sender kept while it took the receiver for dead, handed back to it (absent: none). */
  handedBack?: IpHandOffMessage[];
}

/**
 * One address handed over by an agent that leaves or back to its authority, or held by an agent when
 * another left its view (`ubicrawl.v1.IpHandOff`; `leasedByGone` only then).
 */
export interface IpHandOffMessage {
  ip: string;
  state: IpHandOverMessage;
  leasedByGone?: boolean;
}

/**
 * Requests to one address that ended (`ubicrawl.v1.IpRelease`); `agentId` and `hops` only on one sent
 * on, `leaseId` only with lease slots.
 */
export type IpReleaseMessage = Omit<IpRelease__Output, "agentId" | "hops" | "leaseId"> & {
  agentId?: string;
  hops?: number;
  leaseId?: number;
};

/** One grant of an `IpGrants` reply. */
export type IpGrantMessage = With<IpGrant__Output, { kind: IpGrantKind }>;

/** One address handed over by its previous authority (`ubicrawl.v1.IpHandOver`). */
export type IpHandOverMessage = With<IpHandOver__Output, { held: IpHeld__Output[] }>;

/** `IpGrants` reply: one grant per ask, one hand-over per address taken over, in order. */
export interface IpReply {
  grants: IpGrantMessage[];
  handedOver?: IpHandOverMessage[];
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
  /** Operator command (from an operator, or relayed by the agent an operator asked with `cluster`). */
  control(request: ControlRequest): Promise<ControlReply>;
  /** A peer's blacklist entries: merge them, answer with this agent's after the merge. */
  syncBlacklist(request: BlacklistSync): Promise<BlacklistSync>;
  /** Payload digests this agent owns: stored before, new (claimed by the asker), or pending. */
  checkDigests(request: DigestCheck): Promise<DigestVerdicts>;
  /** What the asker did with the digests it claimed. */
  settleDigests(request: DigestSettlements): Promise<DigestSettleAck>;
  /** Releases, refusals and asks about addresses this agent is the authority of. */
  ipGrants(request: IpRequest): Promise<IpReply>;
}
