import type { IpGrantMessage, IpHandOverMessage, IpReply, IpRequest } from "../transport/index.js";
import { IP_MAX_HOLD_MS, type IpAuthority, type IpGrant, type IpHandOver } from "./ip-authority.js";

/**
 * `IpGrants` answered by `authority`: the sender's refusals and Crawl-delays, then its releases, the
 * addresses it hands back, (leaving) those it hands over and (an agent gone from its view) what it holds
 * at that one's addresses taken in first, then each ask answered in order, then each address taken over
 * handed over.
 * Refusals come before releases: a refused request's release usually travels with its refusal, and the
 * slot it frees must not go to an ask waiting in the address's line before the server's block is known.
 * A request with an ask that may be held (`holdMs`) is answered once every such ask is (a promise then);
 * any other at once.
 */
export function answerIpRequest(authority: IpAuthority, request: IpRequest): IpReply | Promise<IpReply> {
  const from = request.fromId;
  for (const { ip, retryAfterMs, hasRetryAfter } of request.refusals)
    authority.refused(from, ip, hasRetryAfter ? retryAfterMs : undefined);
  for (const { ip, delayMs } of request.crawlDelays ?? []) authority.crawlDelay(from, ip, delayMs);
  for (const { ip, slotIds, leaseSlots, leaseId, agentId, hops } of request.releases) {
    // An older agent's (0) names no lease.
    const released = (leaseId ?? 0) > 0 ? { slotIds, leaseSlots, leaseId } : { slotIds, leaseSlots };
    if (agentId) authority.forwardedRelease(from, agentId, ip, released, hops ?? 1);
    else authority.release(from, ip, released);
  }
  if ((request.handedBack?.length ?? 0) > 0) {
    const handOffs = new Map(
      (request.handedBack ?? []).map(({ ip, state }) => [ip, fromWireHandOver(state)]),
    );
    authority.handedBack(from, handOffs);
  }
  if ((request.handedOff?.length ?? 0) > 0 || request.leaving) {
    const handOffs = new Map((request.handedOff ?? []).map(({ ip, state }) => [ip, fromWireHandOver(state)]));
    authority.leftHandingOver(from, handOffs, request.leaving ?? false, request.view ?? []);
  }
  if (request.goneAuthority) {
    const holdings = new Map(
      (request.holdings ?? []).map(({ ip, state, leasedByGone }) => [
        ip,
        { state: fromWireHandOver(state), leasedByGone: leasedByGone ?? false },
      ]),
    );
    authority.reportedHoldings(
      from,
      request.goneAuthority,
      holdings,
      request.view ?? [],
      request.holdingsLast ?? false,
    );
  }
  const answers = request.asks.map(({ ip, renew, holdMs, startSlackMs }) =>
    !renew && (holdMs ?? 0) > 0
      ? authority.askHeld(from, ip, holdMs, startSlackMs)
      : authority.ask(from, ip, renew, startSlackMs),
  );
  const handedOver = (request.takeOver ?? []).map((ip) => toWireHandOver(authority.handOver(ip, from)));
  if (answers.every((answer) => !(answer instanceof Promise)))
    return { grants: (answers as IpGrant[]).map(toWireGrant), handedOver };
  return Promise.all(answers).then((grants) => ({ grants: grants.map(toWireGrant), handedOver }));
}

/** How long `request` may be held by its receiver at most (its asks' holds), ms: a caller's deadline adds it. */
export function ipHoldOf(request: IpRequest): number {
  let holdMs = 0;
  for (const ask of request.asks) if (!ask.renew) holdMs = Math.max(holdMs, ask.holdMs ?? 0);
  return Math.min(holdMs, IP_MAX_HOLD_MS);
}

/** `handOver` as the wire carries it. */
export function toWireHandOver(handOver: IpHandOver): IpHandOverMessage {
  return {
    held: [...handOver.held].map(([agentId, count]) => {
      const startsForMs = handOver.startsFor?.get(agentId);
      return startsForMs === undefined
        ? { agentId, count, startsForMs: 0, hasStartsFor: false }
        : { agentId, count, startsForMs, hasStartsFor: true };
    }),
    untilMs: handOver.untilMs,
    blockedForMs: handOver.blockedForMs,
    spacedForMs: handOver.spacedForMs,
    holdForMs: handOver.holdForMs ?? 0,
  };
}

/** A hand-over received over the wire, as {@link IpAuthority.handOver} answers it. */
export function fromWireHandOver(handOver: IpHandOverMessage): IpHandOver {
  return {
    held: new Map(handOver.held.map(({ agentId, count }) => [agentId, count])),
    untilMs: handOver.untilMs,
    startsFor: new Map(
      handOver.held.flatMap(({ agentId, startsForMs, hasStartsFor }) =>
        hasStartsFor ? [[agentId, startsForMs] as const] : [],
      ),
    ),
    blockedForMs: handOver.blockedForMs,
    spacedForMs: handOver.spacedForMs,
    ...(handOver.holdForMs ? { holdForMs: handOver.holdForMs } : {}),
  };
}

function toWireGrant(grant: IpGrant): IpGrantMessage {
  const none = {
    slotId: 0,
    ttlMs: 0,
    waitMs: 0,
    blockedForMs: 0,
    delayMs: 0,
    heldMs: 0,
    startSlackMs: 0,
    leaseId: 0,
  };
  switch (grant.kind) {
    case "lease":
      return {
        ...none,
        kind: "IP_GRANT_LEASE",
        leaseId: grant.leaseId ?? 0,
        ttlMs: grant.ttlMs,
        blockedForMs: grant.blockedForMs,
        delayMs: grant.delayMs,
      };
    case "slot":
      return {
        ...none,
        kind: "IP_GRANT_SLOT",
        slotId: grant.slotId,
        ttlMs: grant.ttlMs,
        heldMs: grant.heldMs ?? 0,
        startSlackMs: grant.startSlackMs ?? 0,
      };
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
      return {
        kind: "lease",
        // An older authority's (0) names none.
        ...((grant.leaseId ?? 0) > 0 ? { leaseId: grant.leaseId } : {}),
        ttlMs: grant.ttlMs,
        blockedForMs: grant.blockedForMs,
        delayMs: grant.delayMs,
      };
    case "IP_GRANT_SLOT":
      return {
        kind: "slot",
        slotId: grant.slotId,
        ttlMs: grant.ttlMs,
        ...(grant.heldMs > 0 ? { heldMs: grant.heldMs } : {}),
        // Said by the authority; an older one's (0) is the default.
        ...((grant.startSlackMs ?? 0) > 0 ? { startSlackMs: grant.startSlackMs } : {}),
      };
    case "IP_GRANT_WAIT":
      return { kind: "wait", waitMs: grant.waitMs };
    case "IP_GRANT_REVOKED":
      return { kind: "revoked" };
  }
}
