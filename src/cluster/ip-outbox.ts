import type { Clock, TimerHandle } from "../clock.js";
import type { IpReleaseMessage, IpReply, IpRequest } from "../transport/index.js";
import { type IpGrant, type IpHandOver, startSlackFor } from "./ip-grant.js";
import { fromWireGrant, fromWireHandOver } from "./ip-wire.js";

/** What {@link IpOutboxes} need. */
export interface IpOutboxesDeps {
  readonly clock: Clock;
  /** Sends `request` to agent `authority` (this agent's own authority answers it in-process). */
  readonly send: (authority: string, request: IpRequest) => Promise<IpReply>;
  /** Told of each message sent to another agent. */
  readonly onMessage?: () => void;
}

/** Releases alone wait this long for company before they are sent, ms. */
const RELEASE_BATCH_MS = 50;

/** An ask whose authority could not be reached is asked again after this long, ms. */
export const UNREACHABLE_WAIT_MS = 500;
/** Rounds of {@link IpOutboxes.flushAll} at most. */
const FLUSH_ROUNDS = 3;
/** The round trips to one authority its start slack is taken from: the least of the last this many. */
const ROUND_TRIPS_KEPT = 16;

interface Ask {
  readonly ip: string;
  readonly renew: boolean;
  readonly resolve: (grant: IpGrant) => void;
}

interface TakeOver {
  readonly ip: string;
  readonly resolve: (handOver: IpHandOver | undefined) => void;
}

/** Slots of a lease this agent ended, given back. */
export interface LeaseSlots {
  readonly slots: number;
  /** The lease (undefined: its authority names none). */
  readonly leaseId: number | undefined;
}

interface Outbox {
  asks: Ask[];
  takeOvers: TakeOver[];
  /** By address, and lease for lease slots (see {@link releaseKey}). */
  releases: Map<string, IpReleaseMessage & { slotIds: number[] }>;
  refusals: IpRequest["refusals"];
  crawlDelays: Map<string, number>;
  sending: boolean;
  /** The message in flight, settled once it is answered or found unreached. */
  inFlight?: Promise<void>;
  timer?: TimerHandle;
}

/**
 * The round trips of the last messages to each authority, ms: the least of them bounds the network's
 * part (a stalled event loop only lengthens some), from which the start slack asked is taken.
 */
class RoundTrips {
  private readonly recent = new Map<string, number[]>();

  add(authority: string, ms: number): void {
    const trips = this.recent.get(authority) ?? [];
    trips.push(ms);
    if (trips.length > ROUND_TRIPS_KEPT) trips.shift();
    this.recent.set(authority, trips);
  }

  /** The start slack to ask of `authority` (see `startSlackFor`; the default before any round trip). */
  startSlackOf(authority: string): number {
    const trips = this.recent.get(authority);
    return startSlackFor(trips === undefined ? 0 : Math.min(...trips));
  }
}

/**
 * An agent's messages to the IP authorities: one at a time per authority, each carrying every ask,
 * take-over, release, refusal and Crawl-delay that waited meanwhile; asks and refusals go at once,
 * releases alone after a short batching wait unless urgent. An authority that cannot be reached grants
 * nothing: its asks are answered a wait of {@link UNREACHABLE_WAIT_MS}, its take-overs undefined.
 */
export class IpOutboxes {
  private readonly outboxes = new Map<string, Outbox>();
  /** This agent's asks held in their address's line now, by address. */
  private readonly held = new Map<string, number>();
  private readonly roundTrips = new RoundTrips();

  constructor(
    private readonly selfId: string,
    private readonly deps: IpOutboxesDeps,
  ) {}

  /** Asks `authority` for a slot at `ip` (`renew`: to renew this agent's lease there), in the next message. */
  ask(authority: string, ip: string, renew: boolean): Promise<IpGrant> {
    return new Promise((resolve) => {
      this.outbox(authority).asks.push({ ip, renew, resolve });
      this.schedule(authority, true);
    });
  }

  /** Asks agent `from`, `ip`'s previous authority, to hand it over to this one. */
  takeOver(from: string, ip: string): Promise<IpHandOver | undefined> {
    return new Promise((resolve) => {
      this.outbox(from).takeOvers.push({ ip, resolve });
      this.schedule(from, true);
    });
  }

  /**
   * Queues the release of slot `slotId` and of `lease`'s slots at `ip` (`urgent`: sent at once, not
   * batched). Those of different leases go apart: each is taken off its own lease.
   */
  release(
    authority: string,
    ip: string,
    slotId: number | undefined,
    lease: LeaseSlots | undefined,
    urgent: boolean,
  ): void {
    const box = this.outbox(authority);
    const leaseId = lease?.leaseId;
    const key = releaseKey(ip, leaseId);
    const entry = box.releases.get(key) ?? {
      ip,
      slotIds: [],
      leaseSlots: 0,
      ...(leaseId === undefined ? {} : { leaseId }),
    };
    if (slotId !== undefined) entry.slotIds.push(slotId);
    entry.leaseSlots += lease?.slots ?? 0;
    box.releases.set(key, entry);
    this.schedule(authority, urgent);
  }

  /** Reports at once that `ip`'s server pushed back, asking to wait `retryAfterMs` (undefined: unsaid). */
  refused(authority: string, ip: string, retryAfterMs: number | undefined): void {
    const box = this.outbox(authority);
    box.refusals.push({ ip, retryAfterMs: retryAfterMs ?? 0, hasRetryAfter: retryAfterMs !== undefined });
    this.schedule(authority, true);
  }

  /** Reports at once a Crawl-delay of `delayMs` asked for by a host at `ip` (the longest queued goes). */
  crawlDelay(authority: string, ip: string, delayMs: number): void {
    const box = this.outbox(authority);
    box.crawlDelays.set(ip, Math.max(delayMs, box.crawlDelays.get(ip) ?? 0));
    this.schedule(authority, true);
  }

  /**
   * Sends every message waiting now, not after its batching wait, and resolves once each is answered
   * or found unreached (a few rounds at most: what queued while one was in flight goes in the next). A
   * leaving agent's lease returns so reach the authorities before it hands its own addresses over and
   * stops; batched, they were lost with it, and its next authority counted its lease until it expired.
   */
  async flushAll(): Promise<void> {
    for (let round = 0; round < FLUSH_ROUNDS; round++) {
      const inFlight: Promise<void>[] = [];
      for (const [authority, box] of this.outboxes) {
        if (box.timer) this.deps.clock.clearTimeout(box.timer);
        box.timer = undefined;
        this.flush(authority);
        if (box.inFlight) inFlight.push(box.inFlight);
      }
      if (inFlight.length === 0) return;
      await Promise.all(inFlight);
    }
  }

  /** This agent's asks held in `ip`'s line at its authority now. */
  heldAt(ip: string): number {
    return this.held.get(ip) ?? 0;
  }

  /**
   * Asks `authority` for a slot at `ip`, held there up to `holdMs` in the address's line: in a message
   * of its own, since the reply waits for it, with the releases waiting for that authority.
   */
  askHeld(authority: string, ip: string, holdMs: number): Promise<IpGrant> {
    if (authority !== this.selfId) this.deps.onMessage?.();
    const unreached: IpGrant = { kind: "wait", waitMs: UNREACHABLE_WAIT_MS };
    // The releases waiting for this authority go with it, taken in before the ask: a slot this agent
    // frees goes to the first waiter there, and this ask waits behind those already waiting. The
    // refusals and Crawl-delays waiting go too, taken in before those releases: a refused request's
    // slot must not be granted again before the server's block is known there.
    const box = this.outboxes.get(authority);
    const releases = box ? [...box.releases.values()] : [];
    const refusals = box?.refusals ?? [];
    const crawlDelays = box
      ? [...box.crawlDelays].map(([delayedIp, delayMs]) => ({ ip: delayedIp, delayMs }))
      : [];
    if (box) {
      box.releases = new Map();
      box.refusals = [];
      box.crawlDelays = new Map();
    }
    const request: IpRequest = {
      fromId: this.selfId,
      releases,
      refusals,
      asks: [{ ip, renew: false, holdMs, startSlackMs: this.roundTrips.startSlackOf(authority) }],
      takeOver: [],
      crawlDelays,
    };
    this.held.set(ip, this.heldAt(ip) + 1);
    const answered = (grant: IpGrant): IpGrant => {
      const left = this.heldAt(ip) - 1;
      if (left > 0) this.held.set(ip, left);
      else this.held.delete(ip);
      return grant;
    };
    return this.deps.send(authority, request).then(
      (reply) => {
        const grant = reply.grants[0];
        return answered(grant ? fromWireGrant(grant) : unreached);
      },
      () => answered(unreached),
    );
  }

  private outbox(authority: string): Outbox {
    let box = this.outboxes.get(authority);
    if (!box) {
      box = {
        asks: [],
        takeOvers: [],
        releases: new Map(),
        refusals: [],
        crawlDelays: new Map(),
        sending: false,
      };
      this.outboxes.set(authority, box);
    }
    return box;
  }

  /** Sends `authority`'s outbox now (`urgent`: asks or refusals wait in it), or after a short batching wait. */
  private schedule(authority: string, urgent: boolean): void {
    const box = this.outbox(authority);
    if (box.sending) return; // sent when the message in flight is answered
    if (urgent) {
      if (box.timer) this.deps.clock.clearTimeout(box.timer);
      box.timer = undefined;
      queueMicrotask(() => this.flush(authority));
    } else if (!box.timer) {
      box.timer = this.deps.clock.setTimeout(() => {
        box.timer = undefined;
        this.flush(authority);
      }, RELEASE_BATCH_MS);
    }
  }

  private flush(authority: string): void {
    const box = this.outbox(authority);
    if (box.sending || !hasAny(box)) return;
    const { asks, takeOvers, releases, refusals, crawlDelays } = box;
    box.asks = [];
    box.takeOvers = [];
    box.releases = new Map();
    box.refusals = [];
    box.crawlDelays = new Map();
    box.sending = true;
    if (authority !== this.selfId) this.deps.onMessage?.();
    const startSlackMs = this.roundTrips.startSlackOf(authority);
    const sentAtMs = this.deps.clock.now();
    const request: IpRequest = {
      fromId: this.selfId,
      releases: [...releases.values()],
      refusals,
      asks: asks.map(({ ip, renew }) => ({ ip, renew, holdMs: 0, startSlackMs })),
      takeOver: takeOvers.map(({ ip }) => ip),
      crawlDelays: [...crawlDelays].map(([ip, delayMs]) => ({ ip, delayMs })),
    };
    box.inFlight = this.deps.send(authority, request).then(
      (reply) => {
        this.roundTrips.add(authority, this.deps.clock.now() - sentAtMs);
        asks.forEach((ask, i) => {
          const grant = reply.grants[i];
          ask.resolve(grant ? fromWireGrant(grant) : { kind: "wait", waitMs: UNREACHABLE_WAIT_MS });
        });
        takeOvers.forEach((takeOver, i) => {
          const handOver = reply.handedOver?.[i];
          takeOver.resolve(handOver ? fromWireHandOver(handOver) : undefined);
        });
        this.sent(authority, box);
      },
      () => {
        // Unreached: nothing is granted (releases and refusals are lost: the slots expire there).
        for (const ask of asks) ask.resolve({ kind: "wait", waitMs: UNREACHABLE_WAIT_MS });
        for (const takeOver of takeOvers) takeOver.resolve(undefined);
        this.sent(authority, box);
      },
    );
  }

  private sent(authority: string, box: Outbox): void {
    box.sending = false;
    box.inFlight = undefined;
    if (box.asks.length + box.takeOvers.length + box.refusals.length + box.crawlDelays.size > 0)
      this.schedule(authority, true);
    else if (box.releases.size > 0) this.schedule(authority, false);
    else if (!box.timer) this.outboxes.delete(authority);
  }
}

function hasAny(box: Outbox): boolean {
  return (
    box.asks.length + box.takeOvers.length + box.releases.size + box.refusals.length + box.crawlDelays.size >
    0
  );
}

/** An outbox's key of the releases at `ip`, of lease `leaseId`'s slots or of slots alone. */
function releaseKey(ip: string, leaseId: number | undefined): string {
  return leaseId === undefined ? ip : `${ip} ${leaseId}`;
}
