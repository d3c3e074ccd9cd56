import type { ClusterFacingAgent } from "../agent/index.js";
import type { Clock } from "../clock.js";
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
  readonly ownership: Pick<Ownership, "ownerOf" | "successorOf">;
  readonly agent: Pick<ClusterFacingAgent, "quiesce" | "doneOf" | "hostRecord" | "adopt" | "commit">;
  /** The failure detector's entry of member `id`. */
  readonly memberOf: (id: string) => MemberEntry | undefined;
  /** A member that called this agent directly: alive (it may change the view, and so the ownership). */
  readonly heardFrom: (member: GossipEntry) => void;
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
  constructor(private readonly deps: HandOverDeskDeps) {}

  /**
   * Answers a claim. The claimant is alive (it asks): taking it into the view stops this agent from
   * crawling every host the claimant owns now. A host this agent holds and the claimant owns here too
   * is passed on once no request of this agent to it is in flight; the others are answered with who
   * holds or owns them. Every answer carries the host's done URLs, at most {@link MAX_DONE_BYTES} in
   * all (`more` asks for the rest).
   */
  async answer(request: ClaimRequest): Promise<ClaimReply> {
    const { tenure, ownership } = this.deps;
    const claimant = fromWireMember(request.claimant);
    this.deps.heardFrom(claimant);
    let room = MAX_DONE_PER_MESSAGE;
    const hosts: HostHandOver[] = [];
    for (const { host, skip } of request.hosts) {
      let status: HandOverStatus = "NOT_HELD";
      let holder: string | undefined;
      if (tenure.holds(host)) {
        const owner = ownership.ownerOf(host);
        if (owner === claimant.id) {
          tenure.pass(host, claimant.id);
          status = "GRANTED";
        } else {
          status = "NOT_YOURS";
          holder = owner;
        }
      } else {
        const passedTo = tenure.passedTo(host);
        if (passedTo === claimant.id) status = "GRANTED";
        else if (passedTo !== undefined && this.deps.memberOf(passedTo) !== undefined) {
          status = "PASSED";
          holder = passedTo;
        }
      }
      // A request of this agent to the host may still be in flight: the claimant must not send one too.
      if (status === "GRANTED" && !(await this.deps.agent.quiesce(host, QUIESCE_WAIT_MS))) status = "LATER";
      const entry = await this.describe(host, status, holder, skip, room);
      room -= entry.done.length / 8;
      hosts.push(entry);
    }
    return { hosts };
  }

  /** Takes in hosts pushed by a leaving agent: their done URLs durably, then their crawl. */
  async takeIn(request: HandOverRequest): Promise<HandOverReply> {
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
   * a page of it. `send` delivers one message; a host whose message failed stays held here.
   */
  pushAll(send: (peerId: string, request: HandOverRequest) => Promise<HandOverReply>): Promise<PushOutcome> {
    return this.push(this.deps.tenure.heldHosts(), (host) => this.deps.ownership.successorOf(host), send);
  }

  /**
   * Pushes every host this agent holds but no longer owns (the view changed: a join, a return, a healed
   * partition) to its owner, with its done URLs, once no request of this agent to it is in flight. The
   * owner may be crawling it already (it claimed it, or took it while the two could not hear each
   * other): it still learns what was done here. A host whose owner did not take it stays held here, to
   * be pushed again at the next check or passed on when claimed.
   */
  pushLost(send: (peerId: string, request: HandOverRequest) => Promise<HandOverReply>): Promise<PushOutcome> {
    const { ownership, selfId } = this.deps;
    const lost = this.deps.tenure.heldHosts().filter((host) => ownership.ownerOf(host) !== selfId);
    return this.push(lost, (host) => ownership.ownerOf(host), send);
  }

  /** True when this agent holds a host it no longer owns (see {@link pushLost}). */
  holdsLostHosts(): boolean {
    const { ownership, selfId } = this.deps;
    return this.deps.tenure.heldHosts().some((host) => ownership.ownerOf(host) !== selfId);
  }

  private async push(
    hosts: readonly string[],
    ownerOf: (host: string) => string | undefined,
    send: (peerId: string, request: HandOverRequest) => Promise<HandOverReply>,
  ): Promise<PushOutcome> {
    const byOwner = new Map<string, string[]>();
    for (const host of hosts) {
      const next = ownerOf(host);
      if (next === undefined || next === this.deps.selfId) continue;
      const group = byOwner.get(next) ?? [];
      group.push(host);
      byOwner.set(next, group);
    }
    const self = this.deps.memberOf(this.deps.selfId);
    if (self === undefined || byOwner.size === 0) return { handed: 0, failed: 0 };
    const from = toWireMember(self, this.deps.clock.now());
    const outcomes = await Promise.all(
      [...byOwner].map(async ([owner, group]) => {
        try {
          for (const host of group) {
            if (!(await this.deps.agent.quiesce(host, QUIESCE_WAIT_MS))) throw new Error(`${host} is busy`);
          }
          for await (const message of this.messages(group)) await send(owner, { from, hosts: message });
          // Passed on only if still held: a claim may have passed it meanwhile (to the same owner).
          for (const host of group) if (this.deps.tenure.holds(host)) this.deps.tenure.pass(host, owner);
          return { handed: group.length, failed: 0 };
        } catch {
          return { handed: 0, failed: group.length };
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
