import type { Clock } from "../clock.js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import type { FailureDetector } from "../failure-detector/index.js";
import type {
  ClaimReply,
  ClaimRequest,
  HandOverReply,
  HandOverRequest,
  HeartbeatReply,
  HeartbeatRequest,
  JoinReply,
  JoinRequest,
  Member,
  MemberFigures,
} from "../transport/index.js";
import type { CrawlEnd } from "./crawl-end.js";
import type { HandOverDesk } from "./hand-over.js";
import type { LastKnownFigures } from "./last-known.js";
import { fromWireMember, toWireMember } from "./members.js";
import type { Ownership } from "./ownership.js";
import type { PartitionStats } from "./partition-stats.js";
import type { RevisitBudgetShare } from "./revisit-budget-share.js";
import type { WorkLoad } from "./termination.js";
import type { UrlExchange } from "./url-exchange.js";

/** What a {@link MembershipService} needs. */
export interface MembershipServiceDeps {
  readonly clock: Clock;
  readonly detector: Pick<FailureDetector, "members" | "onHeartbeat">;
  readonly ownership: Pick<Ownership, "checkNewcomer" | "partitioning">;
  readonly exchange: Pick<UrlExchange, "notePeerLoad">;
  readonly crawlEnd: Pick<CrawlEnd, "observeRequest">;
  /** Answers claims and takes in pushed hosts (host hand-overs). */
  readonly desk: Pick<HandOverDesk, "answer" | "takeIn">;
  readonly partition: Pick<PartitionStats, "load" | "figures">;
  /** The last figures of every member, for the rows of those that cannot be asked; gossiped. */
  readonly lastKnown: Pick<LastKnownFigures, "noteGossip" | "noteLoad" | "gossip">;
  /** The cluster's revisit budgets, from every member's heartbeat load. */
  readonly revisitBudgets: Pick<RevisitBudgetShare, "note">;
}

/**
 * The membership half of the `Agent` service: joins and heartbeats (liveness, gossip, load and
 * figures, both ways), and the host hand-overs between members — claims of a new owner, hosts pushed
 * by a leaving one. Refuses a claimant whose id is taken or whose replicas collide.
 */
export class MembershipService {
  constructor(private readonly deps: MembershipServiceDeps) {}

  /** `Join`: a newcomer announces itself; refused when its id is taken or its replicas collide. */
  async join(request: JoinRequest): Promise<JoinReply> {
    const reply = await this.heartbeat({
      from: request.member,
      members: [request.member],
      load: idleLoad(),
      unanswered: false,
    });
    return { members: reply.members };
  }

  /** `Heartbeat`: liveness, gossip and load, both ways. */
  async heartbeat(request: HeartbeatRequest): Promise<HeartbeatReply> {
    const { detector, clock } = this.deps;
    const from = fromWireMember(request.from);
    const partitioning = request.partitioning ?? "host";
    if (partitioning !== this.deps.ownership.partitioning) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `agent ${from.id} partitions by ${partitioning}, this cluster by ${this.deps.ownership.partitioning}: ` +
          "every agent of a cluster must use the same --partition",
      );
    }
    this.checkNewcomer(request.from);
    let answer: ReturnType<FailureDetector["onHeartbeat"]>;
    try {
      answer = detector.onHeartbeat({
        from,
        entries: request.members.map(fromWireMember),
        unanswered: request.unanswered,
      });
    } catch (error) {
      // The id is alive here at another address: tell the claimant what to do about it.
      throw withIdAdvice(error);
    }
    // Only a sender the detector accepted may report a load (a refused claimant must not fake one).
    this.deps.crawlEnd.observeRequest(from.id, request.load);
    this.noteLoad(from.id, request.load);
    this.deps.lastKnown.noteGossip(request.figures);
    this.deps.exchange.notePeerLoad(from.id, request.load);
    const now = clock.now();
    return {
      members: answer.entries.map((entry) => toWireMember(entry, now)),
      load: this.deps.partition.load(),
      from: toWireMember(answer.from, now),
      figures: this.figures(),
      ...(answer.previousIncarnation === undefined
        ? {}
        : { previousIncarnation: answer.previousIncarnation }),
    };
  }

  /** `ClaimHosts`: a new owner asks for hosts this agent may hold (see {@link HandOverDesk.answer}). */
  async claimHosts(request: ClaimRequest): Promise<ClaimReply> {
    this.checkNewcomer(request.claimant);
    try {
      return await this.deps.desk.answer(request);
    } catch (error) {
      throw withIdAdvice(error);
    }
  }

  /** `HandOverHosts`: a leaving agent pushes the hosts it held; answered once they are durable here. */
  async handOverHosts(request: HandOverRequest): Promise<HandOverReply> {
    this.checkNewcomer(request.from);
    try {
      return await this.deps.desk.takeIn(request);
    } catch (error) {
      throw withIdAdvice(error);
    }
  }

  /** Refuses a sender unknown here whose replicas would collide with a member's (`IdConflict`). */
  private checkNewcomer(member: Member): void {
    if (this.deps.detector.members().some((known) => known.id === member.id)) return;
    try {
      this.deps.ownership.checkNewcomer({ id: member.id, capacity: member.capacity });
    } catch (error) {
      throw withIdAdvice(error);
    }
  }

  /** A member's heartbeat load: its figures when it cannot be asked for its stats, and its revisit budget. */
  noteLoad(memberId: string, load: WorkLoad): void {
    this.deps.lastKnown.noteLoad(memberId, load);
    this.deps.revisitBudgets.note(memberId, load);
  }

  /** The fetch totals this agent gossips with each heartbeat: its own, and the best known of every member. */
  figures(): MemberFigures[] {
    return this.deps.lastKnown.gossip(
      this.deps.partition.figures(),
      this.deps.detector.members().map((member) => member.id),
    );
  }
}

/** An `IdConflict` refusal with what the claimant should do; any other error as it is. */
function withIdAdvice(error: unknown): unknown {
  if (!isUbiError(error, ErrorCode.IdConflict)) return error;
  return new UbiError(ErrorCode.IdConflict, `${error.message}; choose another agent id`);
}

/** The load a newcomer announces: it has done nothing yet. */
function idleLoad(): WorkLoad {
  return {
    idle: true,
    urlBatchesSent: 0,
    urlBatchesReceived: 0,
    pagesFetched: 0,
    queuedUrls: 0,
    spareHostSlots: 0,
    revisitPages: 0,
    revisitBudget: 0,
  };
}
