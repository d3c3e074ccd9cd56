import type { Agent } from "../agent/index.js";
import type { Clock } from "../clock.js";
import type { FailureDetector } from "../failure-detector/index.js";
import type { Logger } from "../logging/index.js";
import type { AgentServiceHandlers, PeerClientPool } from "../transport/index.js";
import { AdminService } from "./admin-service.js";
import { agentHandlers } from "./agent-handlers.js";
import type { BlacklistGossip } from "./blacklist-gossip.js";
import type { CrawlEnd } from "./crawl-end.js";
import type { HandOverDesk } from "./hand-over.js";
import type { IpAuthority } from "./ip-authority.js";
import { answerIpRequest } from "./ip-wire.js";
import type { LastKnownFigures } from "./last-known.js";
import { MembershipService } from "./membership-service.js";
import type { Ownership } from "./ownership.js";
import type { PartitionStats } from "./partition-stats.js";
import type { RevisitBudgetShare } from "./revisit-budget-share.js";
import type { UrlExchange } from "./url-exchange.js";
import { UrlIntake, type UrlIntakeOptions } from "./url-intake.js";

/** The parts of a cluster agent the `Agent` service's answers come from (see {@link agentService}). */
export interface AgentServiceDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly agent: Agent;
  readonly detector: FailureDetector;
  readonly ownership: Ownership;
  readonly exchange: UrlExchange;
  readonly crawlEnd: CrawlEnd;
  readonly desk: HandOverDesk;
  readonly partition: PartitionStats;
  readonly lastKnown: LastKnownFigures;
  readonly revisitBudgets: RevisitBudgetShare;
  readonly peers: PeerClientPool;
  readonly blacklist: BlacklistGossip;
  readonly ipAuthority: IpAuthority;
  /** URL batches from peers taken in at once at most. */
  readonly maxConcurrentSubmits: UrlIntakeOptions["maxConcurrentSubmits"];
  /** A graceful leave of this agent (`ctl leave`), then what follows it. */
  readonly leave: () => Promise<unknown>;
}

/** The `Agent` service of one cluster agent: the parts that answer it, and its handlers. */
export interface AgentService {
  /** Joins, heartbeats and host hand-overs: the membership half of the service. */
  readonly membership: MembershipService;
  /** URL batches from peers: the receiving half of the URL exchange. */
  readonly intake: UrlIntake;
  /** The operator's stats and commands. */
  readonly admin: AdminService;
  /** Each RPC passed to the part that owns it (see agent-handlers.ts). */
  readonly handlers: AgentServiceHandlers;
}

/**
 * Builds the parts that answer a cluster agent's peers and operator — membership, the URL intake, the
 * admin service — and the handlers that pass each RPC of the `Agent` service to its part (blacklist
 * syncs, digest checks and IP grants go to the blacklist gossip, the agent and the IP authority).
 */
export function agentService(deps: AgentServiceDeps): AgentService {
  const { clock, logger, agent, detector, ownership, partition, lastKnown, blacklist, ipAuthority } = deps;
  const membership = new MembershipService({
    clock,
    detector,
    ownership,
    exchange: deps.exchange,
    crawlEnd: deps.crawlEnd,
    desk: deps.desk,
    partition,
    lastKnown,
    revisitBudgets: deps.revisitBudgets,
  });
  const intake = new UrlIntake(
    { maxConcurrentSubmits: deps.maxConcurrentSubmits },
    { agent, ownership, partition, exchange: deps.exchange },
  );
  const admin = new AdminService({
    clock,
    agent,
    detector,
    ownership,
    partition,
    lastKnown,
    peers: deps.peers,
    blacklist,
    logger,
    leave: () => {
      deps.leave().catch((error) => logger.error({ event: "leave-failed", err: error }, "the leave failed"));
    },
  });
  const handlers = agentHandlers({
    membership,
    intake,
    admin,
    blacklist,
    digests: agent.digests,
    ipGrants: (request) => answerIpRequest(ipAuthority, request),
  });
  return { membership, intake, admin, handlers };
}
