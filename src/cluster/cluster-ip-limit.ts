import type { Clock } from "../clock.js";
import type { LivesListener, RisenIncarnation } from "../failure-detector/index.js";
import type { Assignment } from "../hashing/index.js";
import type { Logger } from "../logging/index.js";
import { type IpRequest, MAX_IP_ENTRIES, type PeerClient } from "../transport/index.js";
import { ClusterIpGate } from "./cluster-ip-gate.js";
import { IP_LEASE_TTL_MS, IpAuthority, type IpHandOver } from "./ip-authority.js";
import type { CrashHolding } from "./ip-hand-over.js";
import { previousAuthorityOf, returnedAuthorityOf } from "./ip-hand-over.js";
import { answerIpRequest, ipHoldOf, toWireHandOver } from "./ip-wire.js";
import type { Ownership } from "./ownership.js";
import { RESTART_INCARNATION_STEP, RestartWatch } from "./restart-watch.js";

/** Longest wait for an IP authority's answer: past it nothing is granted, and the asker asks again. */
const IP_DEADLINE_MS = 2_000;

/** How much longer than the whole-fetch deadline a granted slot lasts when its release never comes, ms. */
const SLOT_MARGIN_MS = 2_000;

/** What {@link clusterIpLimit} needs. */
export interface ClusterIpLimitDeps {
  readonly selfId: string;
  readonly clock: Clock;
  readonly ownership: Ownership;
  /** Requests at once to one address (`--max-per-ip`). */
  readonly maxPerIp: number;
  /** The least time between two request starts at one address, ms. */
  readonly ipDelayMs: number;
  /** The whole-fetch deadline, ms: a granted slot lasts a little longer when its release never comes. */
  readonly fetchTimeoutMs: number;
  /** The failure detector's suspicion timeout, ms: how long a view takes to learn of a new authority. */
  readonly suspectAfterMs: number;
  /** The client of a member, by id. */
  readonly peerClient: (id: string) => PeerClient;
  /** Told of each IP message sent to another agent (stats). */
  readonly onMessage: () => void;
  /**
   * True when this agent's requests go through the gate (`--ip-limit cluster`): only then has it
   * holdings to report when an agent leaves its view (unset: false).
   */
  readonly gated?: boolean;
  /**
   * True when agent `id` left on purpose (announced): it handed its addresses over, so nobody reports
   * what they hold there (unset: never).
   */
  readonly hasLeft?: (id: string) => boolean;
  /**
   * The incarnation of agent `id` as this agent knows it (a restart makes a greater one; undefined:
   * unknown): an agent back in the view as a new incarnation is counted no more for what its
   * predecessor held (unset: never known).
   */
  readonly incarnationOf?: (id: string) => number | undefined;
  /**
   * Where this agent says its previous life's grants hold its addresses, and its addresses blocked
   * after their servers' push-back (unset: nowhere).
   */
  readonly logger?: Logger;
}

/** One agent's two sides of the cluster-wide per-IP limit. */
export interface ClusterIpLimit {
  /** The politeness of the IP addresses this agent is the authority of, for the whole cluster. */
  readonly authority: IpAuthority;
  /** This agent's requests per IP address, limited cluster-wide. */
  readonly gate: ClusterIpGate;
  /**
   * The ownership changed (from `before`): the authority takes the addresses new to it over from their
   * previous authorities.
   */
  readonly ownershipChanged: (before: Assignment) => void;
  /**
   * This agent leaves, its requests over: its gate gives its leases back, and its authority stops
   * granting and hands each of its addresses over to its next authority, telling every other agent of
   * the view it is done (see `IpAuthority.leave`). Resolves once each has answered or could not be
   * reached (that one then waits out the grace, as for a crash).
   */
  readonly leave: () => Promise<void>;
  /**
   * What the failure detector tells of lives (`FailureDetector.onLives`): an agent of the view restarted
   * before this one found it gone (what it held counts no more, and it hears what this one holds at its
   * addresses), or this agent did (its previous life's grants are taken over from those reports).
   */
  readonly lives: LivesListener;
}

/**
 * The authority of the addresses this agent owns on the circle and this agent's gate, wired to each
 * other: the gate asks its own authority in-process and the others over the `Agent` service, and the
 * authority takes an address over from its previous authority through the gate's messages (on a
 * change of the ownership).
 */
export function clusterIpLimit(deps: ClusterIpLimitDeps): ClusterIpLimit {
  const { selfId, clock, ownership, peerClient } = deps;
  const slotTtlMs = deps.fetchTimeoutMs + SLOT_MARGIN_MS;
  const ipLimits = { maxPerIp: deps.maxPerIp, ipDelayMs: deps.ipDelayMs };
  const authority: IpAuthority = new IpAuthority(
    {
      ...ipLimits,
      leaseTtlMs: IP_LEASE_TTL_MS,
      slotTtlMs,
      // Another authority's last lease and slots, and the time its view takes to learn of this one.
      graceMs: IP_LEASE_TTL_MS + slotTtlMs + deps.suspectAfterMs,
    },
    {
      clock,
      owns: (ip) => ownership.ownerOfIp(ip) === selfId,
      isAlive: (id) => ownership.assignment.has(id),
      takeOver: (from, ip) => gate.takeOver(from, ip),
      authorityOf: (ip) => ownership.ownerOfIp(ip),
      forwardRelease: (to, agent, ip, { slotIds, leaseSlots, leaseId }, hops) => {
        const request: IpRequest = {
          fromId: selfId,
          releases: [
            {
              ip,
              slotIds: [...slotIds],
              leaseSlots,
              ...(leaseId === undefined ? {} : { leaseId }),
              agentId: agent,
              hops,
            },
          ],
          refusals: [],
          asks: [],
        };
        deps.onMessage();
        // Lost, the release counts at the next authority until the slot expires: slower, never faster.
        peerClient(to)
          .ipGrants(request, { deadlineMs: IP_DEADLINE_MS })
          .catch(() => undefined);
      },
      ...(deps.logger ? { logger: deps.logger } : {}),
    },
  );
  const gate = new ClusterIpGate(selfId, ipLimits, {
    clock,
    authorityOf: (ip) => ownership.ownerOfIp(ip),
    send: async (to, request) =>
      to === selfId
        ? answerIpRequest(authority, request)
        : peerClient(to).ipGrants(request, { deadlineMs: IP_DEADLINE_MS + ipHoldOf(request) }),
    onMessage: deps.onMessage,
    kept: (ip) => authority.politenessAt(ip),
    isMember: (id) => ownership.assignment.has(id),
  });
  const restarts = new RestartWatch({
    incarnationOf: (id) => deps.incarnationOf?.(id),
    hasLeft: (id) => deps.hasLeft?.(id) === true,
  });
  const ownershipChanged = (before: Assignment) => {
    const after = ownership.assignment;
    const { restarted, returned } = restarts.viewChanged(before, after);
    authority.viewChanged(
      previousAuthorityOf(selfId, before, after),
      before.agents.map(({ id }) => id),
      after.agents.map(({ id }) => id),
      returnedAuthorityOf(selfId, after, returned),
    );
    for (const id of restarted) authority.restarted(id);
    // Unreached, what it granted there runs on beside what the agent back grants until it ends.
    for (const [to, handOffs] of authority.handBack(returned)) void sendHandBack(to, handOffs);
    if (!deps.gated) return;
    // An agent new to the view hears what this one holds, as after a crash, in case it restarted before
    // others found it gone (see `IpAuthority.previousLifeMayRun`: it waits for every agent of its
    // view): requests started under its previous life's leases and slots may still run here.
    for (const { id } of after.agents)
      if (id !== selfId && !before.has(id)) void sendReport(id, id, gate.holdings(id, slotTtlMs), after);
    for (const { id } of before.agents)
      if (id !== selfId && !after.has(id) && deps.hasLeft?.(id) !== true) reportHoldings(id, after);
  };
  /**
   * Agent `gone` left this agent's view, now `after`: every agent of it hears what this one holds at
   * `gone`'s addresses (see ip-crash-reports.ts), this one's own authority first.
   */
  const reportHoldings = (gone: string, after: Assignment) => {
    const holdings = gate.holdings(gone, slotTtlMs);
    authority.reportedHoldings(selfId, gone, holdings, viewOf(after), true);
    for (const { id } of after.agents) if (id !== selfId) void sendReport(id, gone, holdings, after);
  };
  const viewOf = (assignment: Assignment) => assignment.agents.map(({ id }) => id);
  /** Hands agent `to`, back in the view, the addresses this agent kept meanwhile (`IpAuthority.handBack`). */
  const sendHandBack = (to: string, handOffs: ReadonlyMap<string, IpHandOver>) => {
    const entries = [...handOffs].map(([ip, state]) => ({ ip, state: toWireHandOver(state) }));
    return sendChunks(to, entries, (chunk) => ({
      fromId: selfId,
      releases: [],
      refusals: [],
      asks: [],
      handedBack: chunk,
    }));
  };
  /** Tells agent `to` what this agent holds, in view `after`, at the addresses of `gone` (a crash's report). */
  const sendReport = (
    to: string,
    gone: string,
    holdings: ReadonlyMap<string, CrashHolding>,
    after: Assignment,
  ) => {
    const entries = [...holdings].map(([ip, { state, leasedByGone }]) => ({
      ip,
      state: toWireHandOver(state),
      leasedByGone,
    }));
    const view = viewOf(after);
    return sendChunks(to, entries, (chunk, last) => ({
      fromId: selfId,
      releases: [],
      refusals: [],
      asks: [],
      goneAuthority: gone,
      holdings: chunk,
      holdingsLast: last,
      view,
    }));
  };
  /**
   * Agent `id`, alive in this agent's view, is heard as a new life (a restart, not a refutation's +1):
   * its previous life's requests ended with its process, its leases here end, and it hears what this
   * agent holds at its addresses, as after a crash.
   */
  const risen = ({ id, before, after }: RisenIncarnation) => {
    if (id === selfId || after <= before + RESTART_INCARNATION_STEP || !ownership.assignment.has(id)) return;
    authority.restarted(id);
    if (deps.gated) void sendReport(id, id, gate.holdings(id, slotTtlMs), ownership.assignment);
  };
  const lives: LivesListener = {
    risen,
    previousLife: () => {
      // What this agent's previous life granted may run a lease and a slot's life after it ended.
      const forMs = IP_LEASE_TTL_MS + slotTtlMs;
      deps.logger?.info(
        { event: "ip-previous-life", forMs },
        `restarted before the others found this agent gone: its IP addresses wait for what they hold there (at most ${forMs} ms)`,
      );
      authority.previousLifeMayRun(selfId, clock.now() + forMs);
    },
  };
  /**
   * Sends `entries` to agent `to` in requests of at most {@link MAX_IP_ENTRIES} (one at least), one
   * after the other; resolves false when one could not be sent (that agent then waits out the grace).
   */
  const sendChunks = async <T>(
    to: string,
    entries: readonly T[],
    request: (chunk: T[], last: boolean) => IpRequest,
  ): Promise<boolean> => {
    for (let first = 0; first === 0 || first < entries.length; first += MAX_IP_ENTRIES) {
      const last = first + MAX_IP_ENTRIES >= entries.length;
      deps.onMessage();
      const sent = await peerClient(to)
        .ipGrants(request(entries.slice(first, first + MAX_IP_ENTRIES), last), { deadlineMs: IP_DEADLINE_MS })
        .then(
          () => true,
          () => false,
        );
      if (!sent) return false;
    }
    return true;
  };
  const leave = async () => {
    const assignment = ownership.assignment;
    // Answered before its addresses are handed over: its own authority's account (and what it hands
    // over) no longer counts the leases it granted itself.
    await gate.returnLeases();
    const byAuthority = authority.leave((ip) => {
      const owner = assignment.ownerOfRareKey(ip);
      return owner === selfId ? assignment.successors(ip, 1)[0] : owner;
    });
    const view = assignment.agents.map(({ id }) => id);
    const others = view.filter((id) => id !== selfId);
    // Unreached: that agent waits out the grace for these addresses, as after a crash.
    await Promise.all(
      others.map((to) => {
        const handOffs = [...(byAuthority.get(to) ?? [])].map(([ip, state]) => ({
          ip,
          state: toWireHandOver(state),
        }));
        return sendChunks(to, handOffs, (chunk, last) => ({
          fromId: selfId,
          releases: [],
          refusals: [],
          asks: [],
          handedOff: chunk,
          leaving: last,
          view,
        }));
      }),
    );
  };
  return { authority, gate, ownershipChanged, leave, lives };
}
