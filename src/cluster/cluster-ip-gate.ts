// Over 400 lines on purpose: an agent's side of one address's cluster-wide limit — its own gate, the
// lease, the asks and releases in flight, the hold, back-off and Crawl-delay reports — changes together
// on every answer; what has state of its own is apart (IpLeases, IpOutboxes, ContendedAddresses).
import { watchAbort } from "../abort-watch.js";
import { type Clock, sleep } from "../clock.js";
import {
  IpGate,
  type IpLimiter,
  type IpPoliteness,
  type IpRelease,
  IpSpacing,
  ipRelease,
} from "../frontier/index.js";
import type { IpReply, IpRequest } from "../transport/index.js";
import { IP_BACK_OFF } from "./ip-back-off.js";
import { ContendedAddresses } from "./ip-contention.js";
import {
  IP_CRAWL_DELAY_REPORT_MS,
  IP_HOLD_MS,
  IP_POLL_MS,
  IP_START_SLACK_MS,
  type IpGrant,
  type IpHandOver,
} from "./ip-grant.js";
import type { CrashHolding } from "./ip-hand-over.js";
import { type IpLease, IpLeases } from "./ip-leases.js";
import { IpOutboxes, type LeaseSlots } from "./ip-outbox.js";

/** How a {@link ClusterIpGate} limits this agent's requests. */
export interface ClusterIpGateOptions {
  /** Requests at once to one address (`--max-per-ip`). */
  readonly maxPerIp: number;
  /** The least time between two request starts at one address (`--ip-delay-ms`), ms. */
  readonly ipDelayMs: number;
  /**
   * How long an ask for a slot at a full address waits in the address's line at its authority, ms
   * (0: not held — it asks again every {@link IP_POLL_MS} and batches its releases, as before the line
   * existed).
   * @default IP_HOLD_MS
   */
  readonly holdMs?: number;
}

/** What a {@link ClusterIpGate} needs. */
export interface ClusterIpGateDeps {
  readonly clock: Clock;
  /** The authority of `ip` in this agent's current view. */
  readonly authorityOf: (ip: string) => string;
  /**
   * Sends `request` to agent `authority` (this agent's own authority answers it in-process), with a
   * deadline lengthened by its asks' holds (`ipHoldOf`).
   */
  readonly send: (authority: string, request: IpRequest) => Promise<IpReply>;
  /** Told of each message sent to another agent. */
  readonly onMessage?: () => void;
  /** What this agent's own authority keeps at `ip` (undefined: nothing, or not its authority). */
  readonly kept?: (ip: string) => IpPoliteness | undefined;
  /** True while agent `id` is in this agent's view (unset: always). */
  readonly isMember?: (id: string) => boolean;
}

/**
 * The cluster-wide per-IP limit, on the side of an agent sending requests: this agent's own `--max-per-ip`
 * first, then the address's authority (see ip-authority.ts). Under a lease the agent starts requests
 * with no message; otherwise each asks for a slot, and its release goes back in the next message to the
 * authority. Messages to one authority go one at a time, each carrying all that waited meanwhile.
 * Fail-safe: an authority that does not answer grants nothing, and a lease is used only until its end
 * counted from the ask, renewed while used. The IP delay: under a lease this agent spaces its own starts,
 * each from when its request was written (`IpRelease.sent`), not from its grant;
 * the authority spaces the slots it grants. A slot's request starts within its start slack of its grant
 * ({@link IP_START_SLACK_MS} beyond this agent's round trips to the authority, see `startSlackFor`) or
 * is given back unused, with or without an IP delay: the authority counts it started by then, spacing
 * the next slot from it or blocking the address after a server's push-back it hears of. An ask told to
 * wait for a full address asks again held (`holdMs`), alone in a message of its own so nothing else
 * waits behind it: it waits in the address's line at the authority and is answered as soon as a slot
 * frees for it. At an address found contended so (for a lease's time), asks go held at once, and
 * releases of slots are sent at once, since someone may wait for them.
 */
export class ClusterIpGate implements IpLimiter {
  private readonly local: IpGate;
  /** This agent's own starts, spaced under its leases. */
  private readonly spacing: IpSpacing;
  private readonly leases: IpLeases;
  private readonly outboxes: IpOutboxes;
  /** Until when this agent starts nothing at an address, after its server pushed back here. */
  private readonly blocks = new Map<string, number>();
  /** The Crawl-delays this agent reported, by address: how long, and when. */
  private readonly reported = new Map<string, { delayMs: number; atMs: number }>();
  /** Addresses found contended lately: asks there go held at once, and releases of slots there are sent at once. */
  private readonly contended: ContendedAddresses;
  /** Slots granted and not released, by address. */
  private readonly slots = new Map<string, number>();

  constructor(
    readonly selfId: string,
    private readonly options: ClusterIpGateOptions,
    private readonly deps: ClusterIpGateDeps,
  ) {
    this.local = new IpGate(options.maxPerIp);
    this.spacing = new IpSpacing(options.ipDelayMs, deps.clock);
    this.outboxes = new IpOutboxes(selfId, deps);
    this.contended = new ContendedAddresses(deps.clock);
    this.leases = new IpLeases(options.maxPerIp, {
      clock: deps.clock,
      authorityOf: deps.authorityOf,
      spacing: this.spacing,
      renew: (authority, ip) => this.outboxes.ask(authority, ip, true),
      release: (ip, slots, grantor, leaseId) => this.queueRelease(ip, undefined, { slots, leaseId }, grantor),
    });
  }

  /** Requests at once to one address. */
  get maxPerIp(): number {
    return this.options.maxPerIp;
  }

  /** Waits until a request to `ip` may start, cluster-wide; call the returned function once it ended. */
  async acquire(ip: string, signal?: AbortSignal): Promise<IpRelease> {
    const releaseLocal = await this.local.acquire(ip, signal);
    try {
      return await this.grant(ip, releaseLocal, signal);
    } catch (error) {
      releaseLocal();
      throw error;
    }
  }

  /**
   * A request to `ip` now, without waiting or asking anyone: a local slot free, no block, a lease held
   * and its spacing due (see {@link IpLimiter.tryAcquire}); else undefined, nothing taken.
   */
  tryAcquire(ip: string): IpRelease | undefined {
    const now = this.deps.clock.now();
    if ((this.blocks.get(ip) ?? 0) > now || this.spacing.unsentAt(ip) > 0) return undefined;
    const lease = this.leases.usable(ip, this.deps.authorityOf(ip));
    if (lease === undefined || Math.max(lease.blockedUntilMs - now, this.spacing.waitMs(ip)) > 0)
      return undefined;
    const releaseLocal = this.local.tryAcquire(ip);
    return releaseLocal === undefined ? undefined : this.startUnder(ip, lease, releaseLocal);
  }

  /** `ip`'s server pushed back: this agent waits, and the authority makes every agent wait. */
  refused(ip: string, retryAfterMs: number | undefined): void {
    const { clock } = this.deps;
    const untilMs = clock.now() + (retryAfterMs ?? IP_BACK_OFF.baseMs);
    this.blocks.set(ip, Math.max(this.blocks.get(ip) ?? 0, untilMs));
    this.outboxes.refused(this.deps.authorityOf(ip), ip, retryAfterMs);
  }

  /**
   * A host at `ip` asks for a Crawl-delay: this agent spaces its own starts there by it at once, and
   * reports it to the address's authority, which spaces every agent's (again every
   * {@link IP_CRAWL_DELAY_REPORT_MS} while this agent still crawls there).
   */
  crawlDelay(ip: string, delayMs: number): void {
    this.spacing.raise(ip, delayMs);
    const now = this.deps.clock.now();
    const last = this.reported.get(ip);
    if (last && last.delayMs >= delayMs && now - last.atMs < IP_CRAWL_DELAY_REPORT_MS) return;
    this.reported.set(ip, { delayMs: Math.max(delayMs, last?.delayMs ?? 0), atMs: now });
    this.outboxes.crawlDelay(this.deps.authorityOf(ip), ip, delayMs);
  }

  /** How long a request to `ip` would wait for this agent's own spacing of its starts there, ms. */
  spacingWaitMs(ip: string): number {
    return this.spacing.waitMs(ip);
  }

  /**
   * `ip`'s authority; the whole line there when this agent is it, else this agent's asks held there; the
   * block and spacing this agent applies or was told of (its own authority's, when it is the authority).
   */
  politenessAt(ip: string): IpPoliteness {
    const keeper = this.deps.authorityOf(ip);
    const kept = keeper === this.selfId ? this.deps.kept?.(ip) : undefined;
    return {
      keeper,
      line: kept?.line ?? this.outboxes.heldAt(ip),
      blockedUntilMs: Math.max(
        this.blocks.get(ip) ?? 0,
        this.leases.blockedUntilMs(ip) ?? 0,
        kept?.blockedUntilMs ?? 0,
      ),
      delayMs: Math.max(this.spacing.delayOf(ip), kept?.delayMs ?? 0),
    };
  }

  /** Asks agent `from`, `ip`'s previous authority, to hand it over to this one (see ip-authority.ts). */
  takeOver(from: string, ip: string): Promise<IpHandOver | undefined> {
    return this.outboxes.takeOver(from, ip);
  }

  /**
   * Agent `gone` left this agent's view without a word: the leases it granted end here (see
   * `IpLeases.endGrantedBy`), and this returns what this agent may still have in flight at each address,
   * whoever granted it, as it reports it (see ip-crash-reports.ts): a running lease of another authority
   * as the whole `--max-per-ip`, else its requests in flight, each lasting `slotTtlMs` at most, with the
   * block and spacing this agent knows; `leasedByGone` where it held a running lease of `gone`'s, which
   * proves `gone` had nothing there. Its asks no longer go to `gone`.
   */
  holdings(gone: string, slotTtlMs: number): Map<string, CrashHolding> {
    const leasedByGone = this.leases.endGrantedBy(gone);
    const held = this.leases.held();
    for (const [ip, count] of this.slots) held.set(ip, (held.get(ip) ?? 0) + count);
    const now = this.deps.clock.now();
    // Where nothing runs but a server's push-back is known, or a lease of gone's proves it had nothing
    // there, that goes too.
    for (const [ip, untilMs] of this.blocks) if (untilMs > now && !held.has(ip)) held.set(ip, 0);
    for (const ip of leasedByGone.keys()) if (!held.has(ip)) held.set(ip, 0);
    const holdings = new Map<string, CrashHolding>();
    for (const [ip, count] of held) {
      // The block a lease carried, the gone authority's back-off included, goes on with the report.
      const blockedUntilMs = Math.max(
        this.blocks.get(ip) ?? 0,
        this.leases.blockedUntilMs(ip) ?? 0,
        leasedByGone.get(ip) ?? 0,
      );
      const state: IpHandOver = {
        held: new Map([[this.selfId, count]]),
        untilMs: slotTtlMs,
        // It starts nothing under them any more: its asks go to the addresses' authorities now.
        startsFor: new Map([[this.selfId, 0]]),
        blockedForMs: Math.max(0, blockedUntilMs - now),
        spacedForMs: this.spacing.waitMs(ip),
      };
      holdings.set(ip, { state, leasedByGone: leasedByGone.has(ip) });
    }
    return holdings;
  }

  /** Addresses leased to this agent now. */
  get leased(): number {
    return this.leases.size;
  }

  /**
   * Gives every lease back to its authority (this agent leaves; see `IpLeases.endAll`), and sends what
   * waits for the authorities at once; resolves once they answered (see `IpOutboxes.flushAll`).
   */
  returnLeases(): Promise<void> {
    this.leases.endAll();
    return this.outboxes.flushAll();
  }

  /** Stops renewing leases (they lapse at the authorities). */
  close(): void {
    this.leases.close();
  }

  /** A request to `ip` starts now under `lease`, holding the local slot `releaseLocal` frees. */
  private startUnder(ip: string, lease: IpLease, releaseLocal: () => void): IpRelease {
    const sent = this.spacing.started(ip);
    const ended = this.leases.started(ip, lease);
    return ipRelease(
      once(() => {
        sent();
        ended();
        releaseLocal();
      }),
      () => {
        sent();
        return true;
      },
    );
  }

  private async grant(ip: string, releaseLocal: () => void, signal?: AbortSignal): Promise<IpRelease> {
    const { clock } = this.deps;
    const holdMs = this.options.holdMs ?? IP_HOLD_MS;
    let hold = holdMs > 0 && this.contended.has(ip);
    for (;;) {
      const blockedMs = (this.blocks.get(ip) ?? 0) - clock.now();
      if (blockedMs > 0) {
        await sleep(clock, blockedMs, signal);
        continue;
      }
      this.blocks.delete(ip);
      const authority = this.deps.authorityOf(ip);
      const lease = this.leases.usable(ip, authority);
      if (lease) {
        if (this.spacing.unsentAt(ip) > 0) {
          // A request of this agent's there is not written yet: the next is spaced from when it is.
          await this.spacing.whenSent(ip, signal);
          continue;
        }
        const leaseBlockedMs = Math.max(lease.blockedUntilMs - clock.now(), this.spacing.waitMs(ip));
        if (leaseBlockedMs > 0) {
          await sleep(clock, leaseBlockedMs, signal);
          continue;
        }
        return this.startUnder(ip, lease, releaseLocal);
      }
      const askedAtMs = clock.now();
      const held: boolean = hold;
      hold = false;
      const grant: IpGrant = held
        ? await this.askHeld(authority, ip, holdMs, askedAtMs, signal)
        : await this.outboxes.ask(authority, ip, false);
      if ((grant.kind === "slot" || grant.kind === "lease") && this.deps.isMember?.(authority) === false) {
        // Its authority left the view meanwhile, and this agent reported what it held of its grants
        // without this one: the new authority counts it nowhere. Given back, unused. (From an authority
        // still in the view it counts in the hand-over.)
        this.giveBack(authority, ip, grant);
        continue;
      }
      const startSlackMs = grant.kind === "slot" ? (grant.startSlackMs ?? IP_START_SLACK_MS) : 0;
      if (grant.kind === "slot" && clock.now() - askedAtMs - (grant.heldMs ?? 0) > startSlackMs) {
        // Too late to start within the slack the authority counts from its grant (the next slot it
        // spaced from this one, or a server's push-back it heard of since): given back unused.
        this.queueRelease(ip, grant.slotId);
        continue;
      }
      if (
        (grant.kind === "slot" && (grant.heldMs ?? 0) > 0) ||
        (grant.kind === "wait" && grant.waitMs <= IP_POLL_MS)
      )
        this.contended.mark(ip);
      if (grant.kind === "slot") {
        const sent = this.spacing.started(ip);
        // The authority counts the slot's start within its start slack of its grant: written later (a
        // stalled event loop, a slow connection), the request would start nearer the next slot it grants,
        // or after a refusal the authority heard of meanwhile blocked the address (with no IP delay too).
        const startsByMs = askedAtMs + (grant.heldMs ?? 0) + startSlackMs;
        this.countSlot(ip, 1);
        const release = ipRelease(
          once(() => {
            sent();
            this.countSlot(ip, -1);
            this.queueRelease(ip, grant.slotId);
            releaseLocal();
          }),
          () => {
            if (clock.now() > startsByMs) return false;
            sent();
            return true;
          },
        );
        if (signal?.aborted) {
          release();
          signal.throwIfAborted();
        }
        return release;
      }
      if (grant.kind === "lease" && !this.leases.take(ip, authority, askedAtMs, grant)) {
        // A lease this agent ended, whose return is on its way there: asked again after a while.
        await sleep(clock, IP_POLL_MS, signal);
      } else if (grant.kind === "wait") {
        // A short wait (the address full, or spaced): waited in the address's line, held, at once; a
        // held ask answered with a wait (an authority that holds nothing) waits it out first.
        hold = holdMs > 0 && grant.waitMs <= IP_POLL_MS;
        if (grant.waitMs > 0 && (held || !hold)) await sleep(clock, grant.waitMs, signal);
      }
    }
  }

  /**
   * Asks `authority` for a slot at `ip`, held there up to `holdMs` in the address's line (see
   * {@link IpOutboxes.askHeld}). Aborted meanwhile, it rejects at once; a slot or lease that
   * comes later is given back (a slot released, a lease taken, so it is returned idle).
   */
  private askHeld(
    authority: string,
    ip: string,
    holdMs: number,
    askedAtMs: number,
    signal?: AbortSignal,
  ): Promise<IpGrant> {
    const answered = this.outboxes.askHeld(authority, ip, holdMs);
    if (!signal) return answered;
    return new Promise<IpGrant>((resolve, reject) => {
      let aborted = false;
      const onAbort = () => {
        aborted = true;
        reject(signal.reason);
      };
      const unwatch = signal.aborted ? undefined : watchAbort(signal, onAbort);
      if (signal.aborted) onAbort();
      answered.then((grant) => {
        unwatch?.();
        if (!aborted) resolve(grant);
        else if (this.deps.isMember?.(authority) === false) this.giveBack(authority, ip, grant);
        else if (grant.kind === "slot") this.queueRelease(ip, grant.slotId);
        // Taken, to be returned idle (or, a lease this agent ended, left to the return on its way).
        else if (grant.kind === "lease") this.leases.take(ip, authority, askedAtMs, grant);
      });
    });
  }

  /** A grant from `authority`, no longer `ip`'s, given back to it unused. */
  private giveBack(authority: string, ip: string, grant: IpGrant): void {
    if (grant.kind === "slot") this.outboxes.release(authority, ip, grant.slotId, undefined, false);
    if (grant.kind === "lease") {
      const lease = { slots: this.options.maxPerIp, leaseId: grant.leaseId };
      this.outboxes.release(authority, ip, undefined, lease, false);
    }
  }

  /** `delta` slots at `ip` granted (1) or released (-1). */
  private countSlot(ip: string, delta: number): void {
    const count = (this.slots.get(ip) ?? 0) + delta;
    if (count > 0) this.slots.set(ip, count);
    else this.slots.delete(ip);
  }

  /**
   * A slot's release goes to the address's authority now, which may not be the one that granted: a
   * new authority counts what its previous one handed over until the agents release it, and one that
   * keeps no account of the slot sends its release on (exact wherever it lands: by its id). A lease's
   * slots go to `grantor`, the authority that granted it, while it is in this agent's view, else on to
   * the address's authority; wherever they land they are taken off that lease only (by its id, see
   * `IpLedger.release`).
   */
  private queueRelease(ip: string, slotId: number | undefined, lease?: LeaseSlots, grantor?: string): void {
    if (slotId === undefined && (lease === undefined || lease.slots <= 0)) return;
    // At a contended address a slot's release is awaited in its line: sent at once (with what waits).
    const held = (this.options.holdMs ?? IP_HOLD_MS) > 0;
    const urgent = slotId !== undefined && held && this.contended.has(ip);
    const to =
      grantor !== undefined && this.deps.isMember?.(grantor) !== false ? grantor : this.deps.authorityOf(ip);
    this.outboxes.release(to, ip, slotId, lease, urgent);
  }
}

/** `action`, run on the first call only. */
function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}
