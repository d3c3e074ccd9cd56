// Over 400 lines on purpose: the two ways a host leaves this agent — answered to a claim, or pushed to
// its owner — share the hosts being pushed, the host's description on the wire (done set, page
// histories, cut to fit messages) and the barrier before its done set leaves; one class keeps the order
// of those changes. The delivery the barrier waits for is HandOverDelivery's, the claiming side HostClaims'.
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
  MAX_PAGE_SCHEDULE_BYTES,
  type PageSchedule,
  pageScheduleBytes,
} from "../transport/index.js";
import type { CrawlTenure } from "./crawl-tenure.js";
import { fromWireMember, toWireMember } from "./members.js";
import type { Ownership } from "./ownership.js";
import { fromPageSchedules, toPageSchedule } from "./page-schedule-wire.js";

/**
 * How long the old owner of a claimed host waits for its requests in flight to the host before it
 * answers LATER (the claimant asks again): long enough for a politeness wait and most fetches.
 */
const QUIESCE_WAIT_MS = 20_000;

/**
 * How long a host's hand-over waits for the links its pages gave and the URLs drained from its queue to
 * be acknowledged by the agents they went to (`HandOverDeps.beforeHandOver`): with the quiesce, an
 * answer still fits in the claimant's deadline (30 s). Past it, the host is handed over later.
 */
export const HAND_OVER_DELIVERY_MS = 5_000;
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
  readonly ownership: Pick<Ownership, "ownerOf" | "ownerOnceGone" | "assignment">;
  readonly agent: Pick<
    ClusterFacingAgent,
    | "quiesce"
    | "doneOf"
    | "hostRecord"
    | "adopt"
    | "commit"
    | "historiesOf"
    | "adoptHistories"
    | "releaseHistories"
  >;
  /** The failure detector's entry of member `id`. */
  readonly memberOf: (id: string) => MemberEntry | undefined;
  /** A member that called this agent directly: alive (it may change the view, and so the ownership). */
  readonly heardFrom: (member: GossipEntry) => void;
  /**
   * `hosts` go to agent `to` with their done sets: the URLs waiting in their queues are drained to `to`,
   * the links found on their pages that still wait here are given to other agents to keep, and both are
   * delivered before the done sets leave, so that this agent's crash does not lose them (their pages,
   * done, would not be fetched again to find them anew; see `HandOverDelivery`). Resolves false when
   * they were not all acknowledged in time: the hosts are then not handed over yet. Not called while
   * this agent is leaving.
   */
  readonly beforeHandOver?: (hosts: readonly string[], to: string) => Promise<boolean>;
}

/** Delivers one pushed hand-over message to agent `peerId`; `signal` aborts it (the agent left the view). */
export type PushSender = (
  peerId: string,
  request: HandOverRequest,
  signal: AbortSignal,
) => Promise<HandOverReply>;

/** Where a host's hand-over goes on from: done fingerprints and page histories already sent. */
interface Cursor {
  readonly skip: number;
  readonly skipPages: number;
}

/** What is left of one message for done fingerprints (a count) and page histories (bytes). */
interface Room {
  done: number;
  pageBytes: number;
}

/** What {@link HandOverDesk} says of one claimed host, before the done URLs are added. */
interface Verdict {
  readonly status: HandOverStatus;
  /**
   * PASSED: the agent holding it now; NOT_YOURS: its owner here; NOT_HELD: the agent that owned it here
   * before the claimant, when not this one (a claimant whose view lacks it must not take the host).
   */
  readonly holder?: string;
  /** GRANTED by passing the host, held here until this answer, to the claimant now. */
  readonly passedNow?: boolean;
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
  /**
   * Hosts passed to a claimant by an answer still waiting for its quiesce and barrier: any other claim
   * meanwhile is answered LATER (a done set must not leave in another answer before the barrier, and
   * that answer's outcome, granted or taken back, must be the only one).
   */
  private readonly granting = new Set<string>();
  /** Pushes on their way, by the agent pushed to: aborted when it leaves the view. */
  private readonly sendingTo = new Map<string, Set<AbortController>>();
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
   * (LATER until then, while this agent is pushing it, or while another answer is passing it); one
   * passed to another live agent is PASSED, naming it; else NOT_HELD, naming the agent that owned it before the claimant in this view (when not
   * this one). An answer carries the host's done URLs, at most {@link MAX_DONE_BYTES} in all (`more`
   * asks for the rest), unless it is LATER or NOT_YOURS from the host's holder: the claimant records
   * what an answer carries, and a done set must not leave its holder before the barrier (see
   * `beforeHandOver`). A host passed to the claimant by this answer but answered LATER is taken back:
   * held here, it is pushed to its owner or granted at the next claim, not left passed to an agent that
   * may never ask again.
   */
  async answer(request: ClaimRequest): Promise<ClaimReply> {
    const claimant = fromWireMember(request.claimant);
    this.deps.heardFrom(claimant);
    const verdicts = request.hosts.map(({ host }) => this.verdict(host, claimant.id));
    const passing = request.hosts.filter((_, i) => verdicts[i]?.passedNow).map(({ host }) => host);
    for (const host of passing) this.granting.add(host);
    try {
      return await this.settle(request, claimant.id, verdicts);
    } finally {
      for (const host of passing) this.granting.delete(host);
    }
  }

  /** {@link answer} once its verdicts are made: waits for their quiesce and barrier, then describes each. */
  private async settle(
    request: ClaimRequest,
    claimantId: string,
    verdicts: readonly Verdict[],
  ): Promise<ClaimReply> {
    // A request of this agent to a granted host may still be in flight: the claimant must not send one
    // too. Waited for at once, not host after host.
    const settled = await Promise.all(
      verdicts.map(({ status }, i) =>
        status === "GRANTED"
          ? this.deps.agent.quiesce(request.hosts[i]?.host as string, QUIESCE_WAIT_MS)
          : true,
      ),
    );
    // Passed on, no request of this agent in flight there: every link their pages gave is queued here,
    // and goes to be kept elsewhere before their done sets leave.
    const granted = request.hosts.filter((_, i) => settled[i] && verdicts[i]?.status === "GRANTED");
    const delivered =
      granted.length === 0 ||
      (await (this.deps.beforeHandOver?.(
        granted.map(({ host }) => host),
        claimantId,
      ) ?? true));
    const room: Room = { done: MAX_DONE_PER_MESSAGE, pageBytes: MAX_PAGE_SCHEDULE_BYTES };
    const hosts: HostHandOver[] = [];
    let released = false;
    for (const [i, { host, skip, skipPages = 0 }] of request.hosts.entries()) {
      const verdict = verdicts[i] as Verdict;
      const status = settled[i] && (verdict.status !== "GRANTED" || delivered) ? verdict.status : "LATER";
      if (status === "LATER" && verdict.passedNow && this.deps.tenure.passedTo(host) === claimantId)
        this.deps.tenure.take(host);
      const withheld =
        status === "LATER" ||
        (status === "NOT_YOURS" &&
          (this.deps.tenure.holds(host) || this.pushing.has(host) || this.granting.has(host)));
      const entry = await this.describe(host, status, verdict.holder, { skip, skipPages }, room, withheld);
      hosts.push(entry);
      // The last part of a host's hand-over: its schedule is the claimant's now (a part lost on the way
      // is asked again, and comes without its plans: the claimant plans those from their last visits).
      if (status === "GRANTED" && !entry.more) {
        await this.deps.agent.releaseHistories(host);
        released = true;
      }
    }
    if (released) await this.deps.agent.commit();
    return { hosts };
  }

  /** What this agent says of `host` to `claimantId` (passing it on when it holds it for the claimant). */
  private verdict(host: string, claimantId: string): Verdict {
    const { tenure, ownership } = this.deps;
    const owner = ownership.ownerOf(host);
    if (owner !== claimantId) return { status: "NOT_YOURS", holder: owner };
    if (this.pushing.has(host) || this.granting.has(host)) return { status: "LATER" };
    if (tenure.holds(host)) {
      tenure.pass(host, claimantId);
      return { status: "GRANTED", passedNow: true };
    }
    const passedTo = tenure.passedTo(host);
    if (passedTo === claimantId) return { status: "GRANTED" };
    if (passedTo !== undefined && this.deps.memberOf(passedTo)?.status === "alive") {
      return { status: "PASSED", holder: passedTo };
    }
    // The claimant owns the host: the next agent along the circle here owned it before the claimant.
    const previous = ownership.assignment.successors(host, 1)[0];
    return previous === undefined || previous === this.deps.selfId
      ? { status: "NOT_HELD" }
      : { status: "NOT_HELD", holder: previous };
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
    await this.adopt(request.hosts);
    for (const host of request.hosts) if (!host.more) this.deps.tenure.take(host.host);
    return { taken: request.hosts.length };
  }

  /**
   * Records what hand-overs say of hosts' past crawls (their done URLs, page counts, abandonment, and
   * the page histories of `--recrawl`, planned here), durably in one commit. A page history that is
   * not of its host fails the whole message (`BadMessage`) before anything is recorded.
   */
  async adopt(handOvers: readonly HostHandOver[]): Promise<void> {
    const histories = handOvers.map(({ host, pages = [] }) => ({
      host,
      histories: fromPageSchedules(host, pages),
    }));
    for (const handOver of handOvers) {
      const done = unpackFingerprints(handOver.done);
      if (done.length === 0 && handOver.pagesFetched === 0 && handOver.abandoned === "") continue;
      this.deps.agent.adopt(handOver.host, {
        done,
        pagesFetched: handOver.pagesFetched,
        ...(handOver.abandoned === "" ? {} : { abandoned: handOver.abandoned }),
      });
    }
    await this.deps.agent.adoptHistories(histories.filter((handed) => handed.histories.length > 0));
  }

  /**
   * Agent `id` left the view (dead or gone): pushes to it on their way stop waiting for its answer (a
   * call lost in a partition would wait out its 30 s deadline) and count as failed: their hosts stay
   * here, pushed to their next owner by a later push.
   */
  peerGone(id: string): void {
    for (const controller of this.sendingTo.get(id) ?? [])
      controller.abort(new Error(`agent ${id} left the view`));
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
          // A leaving agent hands every queue over itself, after its hosts (its leave is announced in
          // between): nothing is left here to be kept elsewhere, nor drained yet to wait for.
          if (!this.closed && !(await (this.deps.beforeHandOver?.(ready, owner) ?? true)))
            return { handed: 0, failed: group.length };
          const sending = new AbortController();
          const calls = this.sendingTo.get(owner) ?? new Set();
          this.sendingTo.set(owner, calls.add(sending));
          try {
            for await (const message of this.messages(ready))
              await send(owner, { from, hosts: message }, sending.signal);
          } catch {
            return { handed: 0, failed: group.length };
          } finally {
            calls.delete(sending);
            if (calls.size === 0 && this.sendingTo.get(owner) === calls) this.sendingTo.delete(owner);
          }
          for (const host of ready) {
            this.deps.tenure.pass(host, owner);
            await this.deps.agent.releaseHistories(host);
          }
          await this.deps.agent.commit();
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

  /**
   * The pushed hand-overs of `hosts`, split to fit messages (a host's done set and page histories may
   * span several: the next part of a host starts a new message, so each part has room to move on).
   */
  private async *messages(hosts: readonly string[]): AsyncGenerator<HostHandOver[]> {
    let message: HostHandOver[] = [];
    let room = fullRoom();
    for (const host of hosts) {
      let cursor: Cursor = { skip: 0, skipPages: 0 };
      for (;;) {
        if (room.done === 0 || room.pageBytes === 0 || message.length >= MAX_HOSTS_PER_HAND_OVER) {
          yield message;
          message = [];
          room = fullRoom();
        }
        const entry = await this.describe(host, "GRANTED", undefined, cursor, room, false);
        message.push(entry);
        if (!entry.more) break;
        cursor = {
          skip: cursor.skip + entry.done.length / 8,
          skipPages: cursor.skipPages + (entry.pages?.length ?? 0),
        };
        yield message;
        message = [];
        room = fullRoom();
      }
    }
    if (message.length > 0) yield message;
  }

  /**
   * One host's hand-over entry from `cursor` on, taking what it carries from `room`: done fingerprints
   * and page histories, as many as fit.
   */
  private async describe(
    host: string,
    status: HandOverStatus,
    holderId: string | undefined,
    cursor: Cursor,
    room: Room,
    withheld: boolean,
  ): Promise<HostHandOver> {
    const { agent, clock } = this.deps;
    // A withheld answer (LATER, or NOT_YOURS from the holder) carries none of the host's done URLs nor
    // its page histories: the claimant records what an answer carries, and the done set must not leave
    // before what its pages gave is safe elsewhere (a crash of this agent before the GRANTED answer
    // would lose it: see beforeHandOver).
    const later = withheld;
    // One more than there is room for tells whether more follow.
    const page = later ? [] : await agent.doneOf(host, cursor.skip, room.done + 1);
    const done = page.slice(0, room.done);
    room.done -= done.length;
    const { pages, more } = later
      ? { pages: [], more: false }
      : await this.pagesOf(host, cursor.skipPages, room);
    const record = agent.hostRecord(host);
    const holderEntry = holderId === undefined ? undefined : this.deps.memberOf(holderId);
    return {
      host,
      // A holder this agent no longer knows (forgotten) cannot be named: the claimant asks on.
      status: holderId !== undefined && holderEntry === undefined ? "NOT_HELD" : status,
      holder: holderEntry === undefined ? null : toWireMember(holderEntry, clock.now()),
      done: packFingerprints(done),
      more: page.length > done.length || more,
      pagesFetched: record.pagesFetched,
      abandoned: record.abandoned ?? "",
      pages,
    };
  }

  /** The page histories of `host` after the first `skip` that fit in `room` (taken from it), and whether more follow. */
  private async pagesOf(
    host: string,
    skip: number,
    room: Room,
  ): Promise<{ pages: PageSchedule[]; more: boolean }> {
    const pages: PageSchedule[] = [];
    for await (const history of this.deps.agent.historiesOf(host, skip)) {
      const page = toPageSchedule(history);
      const bytes = pageScheduleBytes(page);
      if (bytes > room.pageBytes) return { pages, more: true };
      room.pageBytes -= bytes;
      pages.push(page);
    }
    return { pages, more: false };
  }
}

/** The room of an empty message. */
function fullRoom(): Room {
  return { done: MAX_DONE_PER_MESSAGE, pageBytes: MAX_PAGE_SCHEDULE_BYTES };
}
