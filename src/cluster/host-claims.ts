import type { ClusterFacingAgent } from "../agent/index.js";
import type { Clock, TimerHandle } from "../clock.js";
import type { ClaimReply, ClaimRequest, HostHandOver, Member } from "../transport/index.js";
import type { CrawlTenure } from "./crawl-tenure.js";
import type { HandOverDesk } from "./hand-over.js";
import type { Ownership } from "./ownership.js";

/**
 * Default of {@link HostClaimsOptions.maxAsked}: every agent of a cluster of up to 16 is asked before a
 * host nobody holds is taken (UbiCrawler's k, the previous owners page recovery asks).
 */
export const DEFAULT_RECOVERY_K = 16;
/** Claims wait this long to travel together (the hosts a burst of links woke up). */
const BATCH_DELAY_MS = 5;
/** Hosts in one claim at most. */
const MAX_HOSTS_PER_CLAIM = 256;
/** A host that could not be settled (an agent busy, unreachable or unknown) is claimed again after this. */
const RETRY_MS = 500;
/** Default of {@link HostClaimsOptions.unheardWaitMs}. */
export const DEFAULT_UNHEARD_WAIT_MS = 10_000;

/** Options of {@link HostClaims}. */
export interface HostClaimsOptions {
  /**
   * Agents asked at most, one after another along the circle, before a host that none of them holds is
   * taken (0: hosts are taken without asking anyone). @default 16
   */
  readonly maxAsked?: number;
  /**
   * How long a host waits at most for an agent named as its holder, or its owner before this one, that
   * this agent has not heard from (a newcomer's view filling in): then its walk goes on without it, as
   * for an agent gone (one this agent cannot reach while the others can would hold it forever).
   * @default 10000
   */
  readonly unheardWaitMs?: number;
}

/** What {@link HostClaims} needs. */
export interface HostClaimsDeps {
  readonly selfId: string;
  readonly clock: Clock;
  readonly tenure: CrawlTenure;
  readonly ownership: Pick<Ownership, "ownerOf" | "assignment">;
  readonly isAlive: (id: string) => boolean;
  /**
   * True when `member` told this one it left the cluster in that life of its or a later one (a graceful
   * leave: its hosts were handed over); not for a later life this agent has not heard of yet.
   */
  readonly hasLeft: (member: Member) => boolean;
  /** This agent's own entry, as sent to the agents it claims from. */
  readonly self: () => Member;
  /** Sends a claim to agent `peerId`; `signal` aborts it (the agent left the view). */
  readonly claim: (peerId: string, request: ClaimRequest, signal: AbortSignal) => Promise<ClaimReply>;
  /** An agent named by an answer (it holds or owns a host) that this agent may not know yet. */
  readonly learnOf: (member: Member) => void;
  /** Where the done URLs and page histories the answers carry are recorded (durably). */
  readonly desk: Pick<HandOverDesk, "adopt">;
  readonly agent: Pick<ClusterFacingAgent, "commit">;
}

/** One host being claimed. */
interface Walk {
  readonly host: string;
  /** Agents asked so far. */
  readonly asked: Set<string>;
  /** The agent to ask next (a continuation, or a holder named by a PASSED answer). */
  next: string | undefined;
  /** Done fingerprints already received from `next` (a continuation after `more`). */
  skip: number;
  /** Page histories already received from `next` (a continuation after `more`). */
  skipPages: number;
  /** Settled: 0 to crawl now, or when to claim again. */
  result?: number;
  /** The holder passed the host's crawl to this agent. */
  granted?: boolean;
}

interface Pending {
  readonly promise: Promise<number>;
  readonly resolve: (atMs: number) => void;
}

/**
 * The new owner's side of host hand-overs. Before crawling a host it owns but does not hold, an agent
 * asks the agents that may hold it, one after another along the circle from the host (the agents that
 * owned it before: those that would own it without this one), and follows PASSED answers to the
 * holder. The holder passes the crawl on with the host's done URLs, and every agent asked sends the
 * done URLs it knows, so no page fetched before is fetched again. An agent that does not hold the host
 * names the one that owned it before this one in its view: if this agent has not heard from that one
 * yet, the host waits for it. When no agent asked holds the host
 * (nobody crawled it yet, or its holder crashed and its takeover grace is over), this agent takes it.
 * Claims for the hosts woken together travel in one message per agent.
 */
export class HostClaims {
  private readonly maxAsked: number;
  private readonly unheardWaitMs: number;
  /** Hosts waiting for an agent not heard from yet, since when (see {@link HostClaimsOptions.unheardWaitMs}). */
  private readonly unheardSince = new Map<string, number>();
  private readonly pending = new Map<string, Pending>();
  private queued: string[] = [];
  /** Claims on their way, by the agent asked: aborted when it leaves the view. */
  private readonly asking = new Map<string, Set<AbortController>>();
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    options: HostClaimsOptions,
    private readonly deps: HostClaimsDeps,
  ) {
    this.maxAsked = options.maxAsked ?? DEFAULT_RECOVERY_K;
    this.unheardWaitMs = options.unheardWaitMs ?? DEFAULT_UNHEARD_WAIT_MS;
  }

  /** 0 when this agent may crawl `host` (which it owns) now; else when to ask again (a promise meanwhile). */
  admit(host: string): number | Promise<number> {
    const { tenure } = this.deps;
    if (tenure.holds(host)) return 0;
    if (this.stopped) return this.deps.clock.now() + RETRY_MS;
    const waiting = this.pending.get(host);
    if (waiting) return waiting.promise;
    if (this.candidates(host).length === 0 || this.maxAsked === 0) {
      tenure.take(host);
      return 0;
    }
    let resolve: (atMs: number) => void = () => {};
    const promise = new Promise<number>((settle) => {
      resolve = settle;
    });
    this.pending.set(host, { promise, resolve });
    this.queued.push(host);
    if (this.queued.length >= MAX_HOSTS_PER_CLAIM) this.flush();
    else this.timer ??= this.deps.clock.setTimeout(() => this.flush(), BATCH_DELAY_MS);
    return promise;
  }

  /**
   * Stops claiming (a leave, a stop): every visit waiting for a claim, queued or in progress, is told
   * to wait; a claim in progress takes nothing it is granted later.
   */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.queued = [];
    this.unheardSince.clear();
    const retryAt = this.deps.clock.now() + RETRY_MS;
    for (const host of [...this.pending.keys()]) this.settle(host, retryAt);
  }

  /**
   * Agent `id` left the view (dead or gone): claims waiting for its answer stop waiting — a message lost
   * in a partition would otherwise hold their hosts until the hand-over deadline — and go on along the
   * circle without it.
   */
  peerGone(id: string): void {
    for (const controller of this.asking.get(id) ?? [])
      controller.abort(new Error(`agent ${id} left the view`));
  }

  private flush(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const hosts = this.queued;
    this.queued = [];
    if (hosts.length === 0) return;
    this.claim(hosts).catch(() => {
      const retryAt = this.deps.clock.now() + RETRY_MS;
      for (const host of hosts) this.settle(host, retryAt);
    });
  }

  /** The other alive agents, in the order a claim of `host` asks them: along the circle from it. */
  private candidates(host: string): string[] {
    const { assignment } = this.deps.ownership;
    return assignment.successors(host, assignment.agents.length).filter((id) => this.deps.isAlive(id));
  }

  private async claim(hosts: readonly string[]): Promise<void> {
    const walks: Walk[] = hosts.map((host) => ({
      host,
      asked: new Set(),
      next: undefined,
      skip: 0,
      skipPages: 0,
    }));
    let active = walks;
    while (active.length > 0) {
      const byPeer = new Map<string, Walk[]>();
      for (const walk of active) {
        const peer = walk.next ?? this.nextCandidate(walk);
        if (peer === undefined) {
          walk.result = 0; // nobody asked holds it: this agent takes it
          continue;
        }
        walk.next = peer;
        const group = byPeer.get(peer) ?? [];
        group.push(walk);
        byPeer.set(peer, group);
      }
      await Promise.all([...byPeer].map(([peer, group]) => this.ask(peer, group)));
      active = active.filter((walk) => walk.result === undefined);
    }
    // What the answers said is durable before any page of these hosts is fetched.
    await this.deps.agent.commit();
    if (this.stopped) {
      // Leaving: what was granted meanwhile stays with its granter (it answers PASSED to this agent,
      // which is gone: the next claimant goes on along the circle).
      for (const walk of walks) this.settle(walk.host, this.deps.clock.now() + RETRY_MS);
      return;
    }
    for (const walk of walks) {
      const result = walk.result ?? 0;
      if (result === 0) {
        this.unheardSince.delete(walk.host);
        // Granted: this agent holds it now, even if a later view gave the host to another agent
        // meanwhile (its crawl is pushed there then). Taken when no one holds it: only while owned.
        if (walk.granted || this.deps.ownership.ownerOf(walk.host) === this.deps.selfId) {
          this.deps.tenure.take(walk.host);
        }
      }
      this.settle(walk.host, result);
    }
  }

  private nextCandidate(walk: Walk): string | undefined {
    if (walk.asked.size >= this.maxAsked) return undefined;
    return this.candidates(walk.host).find((id) => !walk.asked.has(id));
  }

  private async ask(peer: string, walks: readonly Walk[]): Promise<void> {
    for (const walk of walks) walk.asked.add(peer);
    let reply: ClaimReply;
    const controller = new AbortController();
    const asking = this.asking.get(peer) ?? new Set();
    this.asking.set(peer, asking.add(controller));
    try {
      reply = await this.deps.claim(
        peer,
        {
          claimant: this.deps.self(),
          hosts: walks.map((walk) => ({ host: walk.host, skip: walk.skip, skipPages: walk.skipPages })),
        },
        controller.signal,
      );
    } catch {
      // An agent gone from the view holds nothing to wait for; a live one that did not answer may
      // hold the host: ask again later rather than take it.
      const retryAt = this.deps.clock.now() + RETRY_MS;
      for (const walk of walks) {
        walk.skip = 0;
        walk.skipPages = 0;
        walk.next = undefined;
        if (this.deps.isAlive(peer)) walk.result = retryAt;
      }
      return;
    } finally {
      asking.delete(controller);
      if (asking.size === 0) this.asking.delete(peer);
    }
    // What the answers say (done URLs, page histories) is recorded before they are acted on.
    await this.deps.desk.adopt(reply.hosts);
    for (const [i, walk] of walks.entries()) this.apply(walk, reply.hosts[i] as HostHandOver);
  }

  /** Applies one host's answer (adopted) to its walk. */
  private apply(walk: Walk, answer: HostHandOver): void {
    if (answer.more) {
      // The same agent again, for the rest of its done set and page histories.
      walk.skip += answer.done.length / 8;
      walk.skipPages += answer.pages?.length ?? 0;
      return;
    }
    walk.skip = 0;
    walk.skipPages = 0;
    walk.next = undefined;
    const retryAt = this.deps.clock.now() + RETRY_MS;
    switch (answer.status) {
      case "GRANTED":
        walk.result = 0;
        walk.granted = true;
        return;
      case "NOT_HELD": {
        // The asked agent names who owned the host before this one in its view. One this agent has not
        // heard from yet (a newcomer whose view is still filling in) may be crawling it: it is learnt
        // of and the host waits, rather than be taken and its done pages fetched again. One that left
        // handed its hosts over as it went: nothing to wait for.
        const previous = answer.holder;
        if (previous && previous.id !== this.deps.selfId && !walk.asked.has(previous.id)) {
          if (this.deps.isAlive(previous.id)) walk.next = previous.id;
          else if (!this.deps.hasLeft(previous)) this.waitForUnheard(walk, previous, retryAt);
        }
        return; // else the next agent along the circle
      }
      case "LATER":
        walk.result = retryAt;
        return;
      case "PASSED": {
        const holder = answer.holder as Member;
        if (holder.id !== this.deps.selfId && this.deps.isAlive(holder.id) && !walk.asked.has(holder.id)) {
          walk.next = holder.id;
          return;
        }
        // One this agent has not heard from yet holds it: learnt of, and asked once it is alive here.
        if (holder.id !== this.deps.selfId && !this.deps.isAlive(holder.id) && !this.deps.hasLeft(holder)) {
          this.waitForUnheard(walk, holder, retryAt);
        }
        // The agent named was asked already (it does not hold it): the walk goes on along the circle.
        return;
      }
      case "NOT_YOURS":
        // The asked agent knows an owner this one does not: learn of it; the view will change.
        this.deps.learnOf(answer.holder as Member);
        walk.result = retryAt;
        return;
    }
  }

  /**
   * `walk`'s host waits for `member`, not heard from yet: learnt of, and the host claimed again at
   * `retryAt` — unless it has waited {@link HostClaimsOptions.unheardWaitMs} already: then the walk
   * goes on without it.
   */
  private waitForUnheard(walk: Walk, member: Member, retryAt: number): void {
    const now = this.deps.clock.now();
    const since = this.unheardSince.get(walk.host) ?? now;
    if (now - since >= this.unheardWaitMs) return;
    this.unheardSince.set(walk.host, since);
    this.deps.learnOf(member);
    walk.result = retryAt;
  }

  private settle(host: string, atMs: number): void {
    const waiting = this.pending.get(host);
    this.pending.delete(host);
    waiting?.resolve(atMs);
  }
}
