import type { ClusterFacingAgent } from "../agent/index.js";
import { type Clock, sleep, within } from "../clock.js";
import { ErrorCode, isUbiError } from "../errors.js";
import type { HandOverReply, HandOverRequest } from "../transport/index.js";
import type { HandOverDesk } from "./hand-over.js";
import type { HostClaims } from "./host-claims.js";
import type { UrlExchange } from "./url-exchange.js";

/** @default of how long a graceful leave may take: within Kubernetes' 30 s termination grace period. */
export const DEFAULT_LEAVE_TIMEOUT_MS = 20_000;

/** What a graceful leave handed over, and what it could not in time. */
export interface LeaveOutcome {
  /** Hosts handed to their next owner with their done URLs. */
  readonly hostsHanded: number;
  /**
   * Hosts not handed over in time (a request still in flight, or their next owner not answering):
   * their next owners crawl them without this agent's record of what was done there.
   */
  readonly hostsNotHanded: number;
  /**
   * Queued URLs not handed over in time: still queued here, sent and not acknowledged, or still in
   * flight (they stay in this agent's data; restarted on it, the agent sends them again).
   */
  readonly urlsNotHanded: number;
  /**
   * True when no other agent stays in the cluster: each agent alive in this one's view at the end of
   * the leave refused its hand-over because it is leaving too (or none is alive). What was not handed
   * over then had no one to go to: it stays in this data dir, for this agent's next start.
   */
  readonly noAgentStays: boolean;
  /**
   * False when what this agent alone answered for (the URLs it handed to the agents that stay, the
   * links its pages gave to its own hosts) was not all acknowledged by keepers in time: the crash of an
   * agent that took its hosts may then lose some of it, when no other page leads there.
   */
  readonly entrusted: boolean;
}
/** What {@link leaveCluster} works with. */
export interface LeaveDeps {
  readonly clock: Clock;
  readonly agent: Pick<ClusterFacingAgent, "pause" | "urlsInFlight" | "queuedUrls">;
  readonly claims: Pick<HostClaims, "stop">;
  readonly desk: Pick<HandOverDesk, "close" | "pushAll">;
  /** How many hosts this agent holds now. */
  readonly heldHosts: () => number;
  /** Sends one pushed hand-over to `peerId`, within `deadlineMs`. */
  readonly send: (peerId: string, request: HandOverRequest, deadlineMs: number) => Promise<HandOverReply>;
  /**
   * Hands the IP addresses this agent is the authority of over to their next authorities (it grants
   * nothing from then on), so they need not wait out a crashed agent's grace.
   */
  readonly handOffAddresses: () => Promise<void>;
  /** Tells every member this agent leaves (the failure detector's leave). */
  readonly announce: () => Promise<void>;
  /** Resolves when the hand-over of the queues that the leave's view change started is queued. */
  readonly settled: () => Promise<void>;
  /**
   * Hands the URLs queued here again since (put back by a fetch that ended after the queues were
   * handed over) to their owners; resolves when they are queued for sending.
   */
  readonly handOverRequeued: () => Promise<void>;
  readonly exchange: Pick<UrlExchange, "drain" | "pendingUrls">;
  /** The ids of the other agents alive in this agent's view now (self excluded). */
  readonly others: () => readonly string[];
  /**
   * Gives what this agent alone answers for to keepers among the agents that stay (see
   * `entrustToKeepers`); resolves true once they acknowledged all, false past `deadlineAtMs`.
   */
  readonly entrustAlone: (deadlineAtMs: number) => Promise<boolean>;
}

/** A round of a leave's hand-over that left hosts behind is followed by another after this, while its budget lasts. */
const PUSH_RETRY_MS = 200;

/**
 * A graceful leave, within `timeoutMs`: stops starting fetches, claims and taking hosts in, and waits
 * for the requests in flight (a quarter of the time at most); hands every host this agent holds, with
 * the URLs it has done there, to the host's next owner (half of what is left; hosts a next owner did not
 * take are pushed again while that lasts); hands its IP addresses to their next authorities (see
 * `ClusterIpLimit.leave`); announces the leave, so
 * the next owners own what they already hold; hands every queued URL to its next owner and waits for
 * the acknowledgements (the rest); then waits for the URLs still in flight — a fetch the pause does not
 * end, such as a robots.txt request waiting for its address's slot — and hands over those put back in
 * the queue, as long as time is left. What is not handed over by then is said in the outcome, and
 * whether any other agent stays to take it (a cluster stopped as a whole: every agent refuses the
 * others' hosts while it leaves itself); when none stays, the queued URLs are not sent at all. Last,
 * with the time left, what it alone answered for (its outbox, the links its pages gave) goes to keepers.
 */
export async function leaveCluster(timeoutMs: number, deps: LeaveDeps): Promise<LeaveOutcome> {
  const { agent, clock, desk, exchange } = deps;
  const deadline = clock.now() + timeoutMs;
  const left = () => Math.max(0, deadline - clock.now());
  agent.pause();
  deps.claims.stop();
  desk.close();
  // A politeness wait ends at the pause; a fetch ends by itself.
  await within(clock, left() / 4, async (timeUp) => {
    while (agent.urlsInFlight > 0) await sleep(clock, 20, timeUp);
  });
  /** The agents that refused a hand-over because they are leaving too. */
  const leaving = new Set<string>();
  /** True when no other agent stays: each one alive refused the hand-over because it leaves too. */
  const noAgentStays = () => deps.others().every((id) => leaving.has(id));
  const send = (peerId: string, request: HandOverRequest, deadlineMs: number) =>
    deps.send(peerId, request, deadlineMs).catch((error: unknown) => {
      if (isUbiError(error, ErrorCode.Leaving)) leaving.add(peerId);
      throw error;
    });
  const pushBudget = left() / 2;
  /** Hosts handed over so far, over every round. */
  let handed = 0;
  // Past its budget the hand-over sends nothing more (a request on the way ends at its deadline): the
  // hosts not sent are the next owners' to crawl afresh, and this agent records them as still its own.
  // Until then, hosts a next owner did not take (busy past the deadline, a loaded machine) are pushed
  // again: the hosts pushed already are not held here any more, so a round sends only what is left.
  const lastRound = await within(clock, pushBudget, async (timeUp) => {
    for (;;) {
      const round = await desk.pushAll((peerId, request) => {
        if (timeUp.aborted) return Promise.reject(timeUp.reason);
        return send(peerId, request, Math.max(1, pushBudget));
      }, pushBudget / 2);
      handed += round.handed;
      if (round.failed === 0 || noAgentStays()) return round;
      await sleep(clock, PUSH_RETRY_MS, timeUp);
    }
  });
  const pushed = { handed, failed: lastRound?.failed ?? deps.heldHosts() };
  // Its requests are over (paused, and waited for above): its addresses go to their next authorities
  // before the leave is announced, so those take them as handed over when their views change.
  await within(clock, left() / 4, deps.handOffAddresses);
  // Announced after the hand-over: the next owners hold the hosts before they own them. Then the
  // queued URLs go to them (before, they would have sent them back: this agent still owned them).
  await within(clock, left() / 3, deps.announce);
  await within(clock, left(), async (timeUp) => {
    await deps.settled();
    // No agent would take the queued URLs: they stay here (a drain would wait out the timeout).
    if (noAgentStays()) return;
    await exchange.drain(timeUp);
    // A URL in flight past the first wait (a robots.txt request waiting for its address's slot is not
    // ended by the pause) is put back in its queue when its fetch ends: after the queues were handed
    // over above, so it would stay here, unsaid. Waited for, then handed over too.
    if (agent.urlsInFlight === 0) return;
    while (agent.urlsInFlight > 0) await sleep(clock, 20, timeUp);
    await deps.handOverRequeued();
    await exchange.drain(timeUp);
  });
  // Its outbox and the links its pages gave go with it: a crash of an agent that took its hosts would
  // lose them. Entrusted to keepers with the time left.
  const urlsNotHanded = exchange.pendingUrls + agent.queuedUrls + agent.urlsInFlight;
  const entrusted = noAgentStays() || (await deps.entrustAlone(deadline).catch(() => false));
  return {
    hostsHanded: pushed.handed,
    hostsNotHanded: pushed.failed,
    urlsNotHanded,
    noAgentStays: noAgentStays(),
    entrusted,
  };
}

/** How a leave's outcome is logged: its level and its sentence. */
export interface LeaveReport {
  readonly level: "info" | "warn";
  readonly message: string;
}

/**
 * What to say of a graceful leave's outcome. Everything handed over, or nothing handed over because no
 * other agent stays (the whole cluster is stopping), is said at info level: nothing is lost, the data
 * dir keeps it. Hosts or URLs that an agent staying did not take in time are a warning: their next
 * owners crawl the hosts without this agent's record of them; so is what it alone answered for and
 * keepers did not take in time.
 */
export function leaveReport(outcome: LeaveOutcome): LeaveReport {
  const { hostsHanded, hostsNotHanded, urlsNotHanded } = outcome;
  const handed = `left: ${hostsHanded} hosts handed over`;
  const unkept = outcome.entrusted
    ? ""
    : "; not with keepers in time: some of the URLs it handed out and the links its pages gave (a crash " +
      "of an agent that took its hosts may lose them)";
  if (hostsNotHanded + urlsNotHanded === 0) {
    return { level: unkept === "" ? "info" : "warn", message: handed + unkept };
  }
  if (outcome.noAgentStays) {
    return {
      level: "info",
      message:
        `${handed}; no agent left to hand ${hostsNotHanded} hosts and ${urlsNotHanded} queued URLs to ` +
        "(every other agent is leaving too): they stay in this data dir and are taken back at the next start",
    };
  }
  return {
    level: "warn",
    message:
      `${handed}; not in time: ${hostsNotHanded} hosts (their next owners crawl them without this agent's record of them), ` +
      `${urlsNotHanded} queued URLs (kept in its data dir: restart this agent on it to hand them over)${unkept}`,
  };
}
