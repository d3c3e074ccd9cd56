import type { IpGrantMessage, IpHandOverMessage, IpReply, IpRequest } from "../transport/index.js";
import type { IpAuthority, IpGrant, IpHandOver } from "./ip-authority.js";

/**
 * `IpGrants` answered by `authority`: the sender's releases and refusals taken in first, then each ask
 * answered in order, then each address taken over handed over.
 */
export function answerIpRequest(authority: IpAuthority, request: IpRequest): IpReply {
  const from = request.fromId;
  for (const { ip, slotIds, leaseSlots } of request.releases)
    authority.release(from, ip, slotIds, leaseSlots);
  for (const { ip, retryAfterMs, hasRetryAfter } of request.refusals)
    authority.refused(from, ip, hasRetryAfter ? retryAfterMs : undefined);
  for (const { ip, delayMs } of request.crawlDelays ?? []) authority.crawlDelay(from, ip, delayMs);
  const grants = request.asks.map(({ ip, renew }) => toWireGrant(authority.ask(from, ip, renew)));
  const handedOver = (request.takeOver ?? []).map((ip) => toWireHandOver(authority.handOver(ip)));
  return { grants, handedOver };
}

function toWireHandOver(handOver: IpHandOver): IpHandOverMessage {
  return {
    held: [...handOver.held].map(([agentId, count]) => ({ agentId, count })),
    untilMs: handOver.untilMs,
    blockedForMs: handOver.blockedForMs,
    spacedForMs: handOver.spacedForMs,
  };
}

/** A hand-over received over the wire, as {@link IpAuthority.handOver} answers it. */
export function fromWireHandOver(handOver: IpHandOverMessage): IpHandOver {
  return {
    held: new Map(handOver.held.map(({ agentId, count }) => [agentId, count])),
    untilMs: handOver.untilMs,
    blockedForMs: handOver.blockedForMs,
    spacedForMs: handOver.spacedForMs,
  };
}

function toWireGrant(grant: IpGrant): IpGrantMessage {
  const none = { slotId: 0, ttlMs: 0, waitMs: 0, blockedForMs: 0, delayMs: 0 };
  switch (grant.kind) {
    case "lease":
      return {
        ...none,
        kind: "IP_GRANT_LEASE",
        ttlMs: grant.ttlMs,
        blockedForMs: grant.blockedForMs,
        delayMs: grant.delayMs,
      };
    case "slot":
      return { ...none, kind: "IP_GRANT_SLOT", slotId: grant.slotId, ttlMs: grant.ttlMs };
    case "wait":
      return { ...none, kind: "IP_GRANT_WAIT", waitMs: grant.waitMs };
    case "revoked":
      return { ...none, kind: "IP_GRANT_REVOKED" };
  }
}

/** A grant received over the wire, as {@link IpAuthority.ask} answers it. */
export function fromWireGrant(grant: IpGrantMessage): IpGrant {
  switch (grant.kind) {
    case "IP_GRANT_LEASE":
      return { kind: "lease", ttlMs: grant.ttlMs, blockedForMs: grant.blockedForMs, delayMs: grant.delayMs };
    case "IP_GRANT_SLOT":
      return { kind: "slot", slotId: grant.slotId, ttlMs: grant.ttlMs };
    case "IP_GRANT_WAIT":
      return { kind: "wait", waitMs: grant.waitMs };
    case "IP_GRANT_REVOKED":
      return { kind: "revoked" };
  }
}
