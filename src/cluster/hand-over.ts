import type { ClusterFacingAgent } from "../agent/index.js";
import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { GossipEntry, MemberEntry } from "../failure-detector/index.js";
import {
  type ClaimReply,
  type ClaimRequest,
  type HandOverReply,
  type HandOverRequest,
  type HandOverStatus,
  type HostHandOver,
  MAX_DONE_BYTES,
  MAX_HOSTS_PER_HAND_OVER,
} from "../transport/index.js";
import type { CrawlTenure } from "./crawl-tenure.js";
import { fromWireMember, toWireMember } from "./members.js";
import type { Ownership } from "./ownership.js";

/**
 * How long the old owner of a claimed host waits for its requests in flight to the host before it
 * answers LATER (the claimant asks again): long enough for a politeness wait and most fetches.
 */
const QUIESCE_WAIT_MS = 20_000;
/** Done fingerprints in one message at most (8 bytes each). */
const MAX_DONE_PER_MESSAGE = MAX_DONE_BYTES / 8;

/** Packs fingerprints as 8-byte big-endian words, the wire form of `HostHandOver.done`. */
export function packFingerprints(fingerprints: readonly bigint[]): Uint8Array {
  const bytes = new Uint8Array(fingerprints.length * 8);
  const view = new DataView(bytes.buffer);
  for (const [i, fingerprint] of fingerprints.entries()) view.setBigUint64(i * 8, fingerprint);
  return bytes;
}

/** The fingerprints of a `HostHandOver.done` field. */
export function unpackFingerprints(bytes: Uint8Array): bigint[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result: bigint[] = [];
  for (let offset = 0; offset + 8 <= bytes.byteLength; offset += 8) result.push(view.getBigUint64(offset));
  return result;
}

/** What a {@link HandOverDesk} needs. */
export interface HandOverDeskDeps {
  readonly selfId: string;
  readonly clock: Clock;
  readonly tenure: CrawlTenure;
  readonly ownership: Pick<Ownership, "ownerOf" | "ownerOnceGone">;
  readonly agent: Pick<ClusterFacingAgent, "quiesce" | "doneOf" | "hostRecord" | "adopt" | "commit">;
  /** The failure detector's entry of member `id`. */
  readonly memberOf: (id: string) => MemberEntry | undefined;
  /** A member that called this agent directly: alive (it may change the view, and so the ownership). */
  readonly heardFrom: (member: GossipEntry) => void;
}

/** Delivers one pushed hand-over message to agent `peerId`. */
export type PushSender = (peerId: string, request: HandOverRequest) => Promise<HandOverReply>;

/** What {@link HandOverDesk} says of one claimed host, before the done URLs are added. */
interface Verdict {
  readonly status: HandOverStatus;
  /** PASSED: the agent holding it now; NOT_YOURS: its owner here. */
  readonly holder?: string;
}

/** Outcome of {@link HandOverDesk.pushAll}. */
export interface PushOutcome {
  /** Hosts the next owners took in. */
  readonly handed: number;
  /** Hosts that could not be handed over (their next owner did not answer in time). */
  readonly failed: number;
}

/**
 * The old owner's side of host hand-overs: answers claims (`ClaimHosts`), takes in pushed hosts
 * (`HandOverHosts`), and pushes its own: all of them when it leaves, those it lost after a view change.
 */
export class HandOverDesk {
  /** Hosts being pushed to their owner: a claim meanwhile is answered LATER. */
  private readonly pushing = new Set<string>();
  private closed = false;

  constructor(private readonly deps: HandOverDeskDeps) {}

  /** This agent is leaving: it takes in no more pushed hosts. */
  close(): void {
    this.closed = true;
  }

  /**
   * Answers a claim. The claimant is alive (it asks): taking it into the view stops this agent from
   * crawling every host the claimant owns now. A host the claimant does not own in this view is
   * NOT_YOURS, naming its owner (the claimant's view lacks an agent). A host the claimant owns that this
   * agent holds, or passed to it before, is GRANTED once no request of this agent to it is in flight
   * (LATER until then, or while this agent is pushing it); one passed to another live agent is PASSED,
   * naming it; else NOT_HELD. Every answer carries the host's done URLs, at most {@link MAX_DONE_BYTES}
   * in all (`more` asks for the rest).
   */
  async answer(request: ClaimRequest): Promise<ClaimReply> {
    const claimant = fromWireMember(request.claimant);
    this.deps.heardFrom(claimant);
    const verdicts = request.hosts.map(({ host }) => this.verdict(host, claimant.id));
    // A request of this agent to a granted host may still be in flight: the claimant must not send one
    // too. Waited for at once, not host after host.
    const settled = await Promise.all(
      verdicts.map(({ status }, i) =>
        status === "GRANTED"
          ? this.deps.agent.quiesce(request.hosts[i]?.host as string, QUIESCE_WAIT_MS)
          : true,
      ),
    );
    let room = MAX_DONE_PER_MESSAGE;
    const hosts: HostHandOver[] = [];
    for (const [i, { host, skip }] of request.hosts.entries()) {
      const verdict = verdicts[i] as Verdict;
      const status = settled[i] ? verdict.status : "LATER";
      const entry = await this.describe(host, status, verdict.holder, skip, room);
      room -= entry.done.length / 8;
      hosts.push(entry);
    }
    return { hosts };
  }

  /** What this agent says of `host` to `claimantId` (passing it on when it holds it for the claimant). */
  private verdict(host: string, claimantId: string): Verdict {
    const { tenure, ownership } = this.deps;
    const owner = ownership.ownerOf(host);
    if (owner !== claimantId) return { status: "NOT_YOURS", holder: owner };
    if (this.pushing.has(host)) return { status: "LATER" };
    if (tenure.holds(host)) {
      tenure.pass(host, claimantId);
      return { status: "GRANTED" };
    }
    const passedTo = tenure.passedTo(host);
    if (passedTo === claimantId) return { status: "GRANTED" };
    if (passedTo !== undefined && this.deps.memberOf(passedTo)?.status === "alive") {
      return { status: "PASSED", holder: passedTo };
    }
    return { status: "NOT_HELD" };
  }

  /**
   * Takes in pushed hosts (a leaving agent's, or hosts their holder lost): their done URLs durably,
   * then their crawl. Refused with {@link ErrorCode.Leaving} while this agent is leaving itself (the
   * sender keeps them).
   */
  async takeIn(request: HandOverRequest): Promise<HandOverReply> {
    if (this.closed)
      throw new UbiError(ErrorCode.Leaving, "this agent is leaving: hand the hosts to another");
    this.deps.heardFrom(fromWireMember(request.from));
    for (const host of request.hosts) this.adopt(host);
    await this.deps.agent.commit();
    for (const host of request.hosts) if (!host.more) this.deps.tenure.take(host.host);
    return { taken: request.hosts.length };
  }

  /**
   * Records what a hand-over says of a host's past crawl (its done URLs, page count, abandonment);
   * durable at the next commit.
   */
  adopt(handOver: HostHandOver): void {
    const done = unpackFingerprints(handOver.done);
    if (done.length === 0 && handOver.pagesFetched === 0 && handOver.abandoned === "") return;
    this.deps.agent.adopt(handOver.host, {
      done,
      pagesFetched: handOver.pagesFetched,
      ...(handOver.abandoned === "" ? {} : { abandoned: handOver.abandoned }),
    });
  }

  /**
   * A leaving agent's hand-over: every host this agent holds goes to the agent that owns it once this
   * one is gone (with its done URLs), before the leave is announced, so the next owner never refetches
   * a page of it. A host whose request in flight does not end within `quiesceMs`, or whose owner does
   * not take it, stays held here.
   */
  pushAll(send: PushSender, quiesceMs = QUIESCE_WAIT_MS): Promise<PushOutcome> {
    const { ownership, tenure } = this.deps;
    return this.push(tenure.heldHosts(), (host) => ownership.ownerOnceGone(host), send, quiesceMs);
  }

  /**
   * Pushes every host this agent holds but no longer owns (the view changed: a join, a return, a healed
   * partition, a claim granted to an agent that has lost the host meanwhile) to its owner, with its done
   * URLs, once no request of this agent to it is in flight. The owner may be crawling it already (it
   * claimed it, or took it while the two could not hear each other): it still learns what was done
   * here. A host whose owner did not take it stays held here, to be pushed again at the next check or
   * passed on when claimed.
   */
  pushLost(send: PushSender): Promise<PushOutcome> {
    const { ownership, selfId } = this.deps;
    const lost = this.deps.tenure.heldHosts().filter((host) => ownership.ownerOf(host) !== selfId);
    return this.push(lost, (host) => ownership.ownerOf(host), send, QUIESCE_WAIT_MS);
  }

  /** True when this agent holds a host it no longer owns (see {@link pushLost}). */
  holdsLostHosts(): boolean {
    const { ownership, selfId } = this.deps;
    return this.deps.tenure.heldHosts().some((host) => ownership.ownerOf(host) !== selfId);
  }

  private async push(
    hosts: readonly string[],
    ownerOf: (host: string) => string | undefined,
    send: PushSender,
    quiesceMs: number,
  ): Promise<PushOutcome> {
    const byOwner = new Map<string, string[]>();
    for (const host of hosts) {
      const next = ownerOf(host);
      if (next === undefined || next === this.deps.selfId || this.pushing.has(host)) continue;
      const group = byOwner.get(next) ?? [];
      group.push(host);
      byOwner.set(next, group);
    }
    const self = this.deps.memberOf(this.deps.selfId);
    if (self === undefined || byOwner.size === 0) return { handed: 0, failed: 0 };
    const from = toWireMember(self, this.deps.clock.now());
    const outcomes = await Promise.all(
      [...byOwner].map(async ([owner, group]) => {
        for (const host of group) this.pushing.add(host);
        try {
          // A host with a request of this agent still in flight waits for the next push.
          const quiet = await Promise.all(group.map((host) => this.deps.agent.quiesce(host, quiesceMs)));
          const ready = group.filter((host, i) => quiet[i] && this.deps.tenure.holds(host));
          if (ready.length === 0) return { handed: 0, failed: group.length };
          try {
            for await (const message of this.messages(ready)) await send(owner, { from, hosts: message });
          } catch {
            return { handed: 0, failed: group.length };
          }
          for (const host of ready) this.deps.tenure.pass(host, owner);
          return { handed: ready.length, failed: group.length - ready.length };
        } finally {
          for (const host of group) this.pushing.delete(host);
        }
      }),
    );
    return {
      handed: outcomes.reduce((sum, outcome) => sum + outcome.handed, 0),
      failed: outcomes.reduce((sum, outcome) => sum + outcome.failed, 0),
    };
  }

  /** The pushed hand-overs of `hosts`, split to fit messages (a host's done set may span several). */
  private async *messages(hosts: readonly string[]): AsyncGenerator<HostHandOver[]> {
    let message: HostHandOver[] = [];
    let room = MAX_DONE_PER_MESSAGE;
    for (const host of hosts) {
      let skip = 0;
      for (;;) {
        if (room === 0 || message.length >= MAX_HOSTS_PER_HAND_OVER) {
          yield message;
          message = [];
          room = MAX_DONE_PER_MESSAGE;
        }
        const entry = await this.describe(host, "GRANTED", undefined, skip, room);
        const count = entry.done.length / 8;
        message.push(entry);
        room -= count;
        skip += count;
        if (!entry.more) break;
      }
    }
    if (message.length > 0) yield message;
  }

  /** One host's hand-over entry, with at most `room` of its done fingerprints after the first `skip`. */
  private async describe(
    host: string,
    status: HandOverStatus,
    holderId: string | undefined,
    skip: number,
    room: number,
  ): Promise<HostHandOver> {
    const { agent, clock } = this.deps;
    // One more than there is room for tells whether more follow.
    const page = await agent.doneOf(host, skip, room + 1);
    const record = agent.hostRecord(host);
    const holderEntry = holderId === undefined ? undefined : this.deps.memberOf(holderId);
    return {
      host,
      // A holder this agent no longer knows (forgotten) cannot be named: the claimant asks on.
      status: holderId !== undefined && holderEntry === undefined ? "NOT_HELD" : status,
      holder: holderEntry === undefined ? null : toWireMember(holderEntry, clock.now()),
      done: packFingerprints(page.slice(0, room)),
      more: page.length > room,
      pagesFetched: record.pagesFetched,
      abandoned: record.abandoned ?? "",
    };
  }
}
