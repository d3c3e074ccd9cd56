import type { ClusterFacingAgent } from "../agent/index.js";
import {
  type AgentServiceHandlers,
  type IpReply,
  type IpRequest,
  RPC_NAMES,
  type RpcName,
} from "../transport/index.js";
import type { AdminService } from "./admin-service.js";
import type { BlacklistGossip } from "./blacklist-gossip.js";
import { fromWireSettlements, toWireVerdict } from "./digest-wire.js";
import type { MembershipService } from "./membership-service.js";
import type { UrlIntake } from "./url-intake.js";

/** The parts that answer an agent's peers, each the owner of some of the `Agent` service's RPCs. */
export interface AgentServiceParts {
  readonly membership: MembershipService;
  readonly intake: UrlIntake;
  readonly admin: AdminService;
  /** Answers peers' blacklist syncs. */
  readonly blacklist: Pick<BlacklistGossip, "answer">;
  /** Answers digest checks and settlements (cluster dedup: this agent owns some digests). */
  readonly digests: ClusterFacingAgent["digests"];
  /** Answers asks about the IP addresses this agent is the authority of (see ip-authority.ts). */
  readonly ipGrants: (request: IpRequest) => IpReply | Promise<IpReply>;
}

/**
 * The `Agent` service of one cluster agent, each RPC answered by the part that owns it: membership
 * and hand-overs, the URL intake, the operator's commands and stats, blacklist syncs, digest checks
 * and IP grants. A plain object: a test may replace one handler.
 */
export function agentHandlers(parts: AgentServiceParts): AgentServiceHandlers {
  const { membership, intake, admin, blacklist, digests } = parts;
  return {
    join: (request) => membership.join(request),
    heartbeat: (request) => membership.heartbeat(request),
    claimHosts: (request) => membership.claimHosts(request),
    handOverHosts: (request) => membership.handOverHosts(request),
    submitUrls: (request) => intake.submitUrls(request),
    getStats: (request) => admin.getStats(request),
    control: (request) => admin.control(request),
    syncBlacklist: (request) => blacklist.answer(request),
    checkDigests: async (request) => {
      const settled = request.settlements ?? [];
      if (settled.length > 0) {
        digests.settle(request.fromId, fromWireSettlements({ fromId: request.fromId, settlements: settled }));
      }
      const verdicts = await digests.check(
        request.digests.map((digest) => ({
          digest,
          asker: request.fromId,
          incarnation: request.fromIncarnation,
        })),
      );
      return { verdicts: verdicts.map(toWireVerdict) };
    },
    settleDigests: async (request) => {
      digests.settle(request.fromId, fromWireSettlements(request));
      return {};
    },
    ipGrants: async (request) => parts.ipGrants(request),
  };
}

/**
 * Handlers that pass each request to `current()`'s handler of the same RPC, looked up at each call:
 * for a server that must listen before the parts answering it exist, and for a test that replaces one.
 */
export function deferredHandlers(current: () => AgentServiceHandlers): AgentServiceHandlers {
  const forward = (name: RpcName) => (request: never) =>
    (current()[name] as (request: never) => Promise<unknown>)(request);
  return Object.fromEntries(
    RPC_NAMES.map((name) => [name, forward(name)]),
  ) as unknown as AgentServiceHandlers;
}
