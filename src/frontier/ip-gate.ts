import { ErrorCode, UbiError } from "../errors.js";
import { waitInLine } from "./abortable-wait.js";
import type { IpSpacing } from "./ip-spacing.js";

/**
 * What limits an agent's requests per IP address: this agent's own {@link IpGate}, or the cluster's
 * (each address's politeness kept by its authority, cluster/cluster-ip-gate.ts).
 */
export interface IpLimiter {
  /**
   * Waits until a request to `ip` may start; call the returned function exactly once when it ends, and
   * its `sent` when the request is written to the server. `host`, the request's host, is for the
   * busiest addresses' report (the limits ignore it).
   */
  acquire(ip: string, signal?: AbortSignal, host?: string): Promise<IpRelease>;
  /**
   * {@link acquire} when it would not wait: a slot free at `ip` and nothing to wait for there (no
   * spacing, no block, for the cluster's limiter a lease held), taken now; else undefined, and nothing
   * taken. The common case — an address with one host, its slot free — then costs the caller no abort
   * signals of its own (a waiting request needs them: a pause or a hand-over ends its wait).
   */
  tryAcquire(ip: string, host?: string): IpRelease | undefined;
  /**
   * `ip`'s server pushed back (429, 503), asking to wait `retryAfterMs` (undefined: unsaid): every
   * request to the address waits (the whole cluster's, for the cluster's limiter).
   */
  refused(ip: string, retryAfterMs: number | undefined): void;
  /**
   * A host at `ip` asks for a robots.txt Crawl-delay of `delayMs`: requests to the address, whichever
   * host they are for, start at least that far apart (the whole cluster's, for the cluster's limiter).
   */
  crawlDelay(ip: string, delayMs: number): void;
  /** How long a request to `ip` would wait for the spacing of its starts, as far as this agent knows, ms. */
  spacingWaitMs(ip: string): number;
  /** What this agent knows of the politeness kept at `ip` now (for the busiest addresses' report). */
  politenessAt(ip: string): IpPoliteness;
}

/**
 * What {@link IpLimiter.acquire} grants: a function to call exactly once when the request ended, and
 * `sent`, to call as the request is written to the server — its start, from which the IP delay counts
 * (a request is held up on its way by its connection's set-up, the event loop, the bandwidth bound).
 * `sent` answers false when the grant lapsed meanwhile (a cluster slot past its start's slack): the
 * request must not be written; released, it is asked for again. Ended unwritten, the release stands
 * for `sent`.
 */
export type IpRelease = (() => void) & { readonly sent: () => boolean };

/** `release` with `sent` (see {@link IpRelease}): `release` must settle what `sent` would have. */
export function ipRelease(release: () => void, sent: () => boolean): IpRelease {
  return Object.assign(() => release(), { sent });
}

/** The politeness at one address as an agent knows it (see {@link IpLimiter.politenessAt}). */
export interface IpPoliteness {
  /** The agent keeping it: the address's authority (`--ip-limit cluster`); undefined for this agent itself. */
  readonly keeper?: string;
  /**
   * Asks waiting in the address's line at its keeper, as far as this agent knows: the whole line when it
   * keeps the address, else its own asks held there.
   */
  readonly line: number;
  /** Until when no request starts there after its server pushed back (429, 503), ms since the epoch (0: none). */
  readonly blockedUntilMs: number;
  /** The least gap between two starts there in force: the IP delay, or a longer Crawl-delay, ms. */
  readonly delayMs: number;
}

/** The grant of a slot `release` frees and a spacing turn `sent` marks written (see {@link IpRelease}). */
function granted(release: () => void, sent: () => void): IpRelease {
  return ipRelease(
    () => {
      sent();
      release();
    },
    () => {
      sent();
      return true;
    },
  );
}

/** What an {@link IpGate} needs. */
export interface IpGateDeps {
  /** The least gap between two starts at one address (absent: none). */
  readonly spacing?: IpSpacing;
}

/**
 * Limits concurrent requests per IP address, so hosts that share a server (virtual hosting) are not
 * hammered even though each host has its own worker, and spaces their starts (`--ip-delay-ms`).
 * Waiters for a slot are served first come, first served.
 */
export class IpGate implements IpLimiter {
  private readonly inUse = new Map<string, number>();
  private readonly waiters = new Map<string, Array<() => void>>();

  /** @param maxPerIp requests allowed at once to one IP address. */
  constructor(
    readonly maxPerIp: number,
    private readonly deps: IpGateDeps = {},
  ) {
    if (!Number.isInteger(maxPerIp) || maxPerIp < 1) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `max requests per IP must be a positive integer, got ${maxPerIp}`,
      );
    }
  }

  /**
   * Waits for a slot on `ip`, then for its spacing; call the returned function exactly once to free it,
   * and its `sent` when the request is written (the next start there is spaced from then).
   */
  async acquire(ip: string, signal?: AbortSignal): Promise<IpRelease> {
    const release = await this.slot(ip, signal);
    let sent: () => void;
    try {
      sent = (await this.deps.spacing?.turn(ip, signal)) ?? (() => {});
    } catch (error) {
      release();
      throw error;
    }
    return granted(release, sent);
  }

  /** A slot on `ip` now, when one is free and its spacing asks for no wait (see {@link IpLimiter.tryAcquire}). */
  tryAcquire(ip: string): IpRelease | undefined {
    const used = this.inUse.get(ip) ?? 0;
    if (used >= this.maxPerIp) return undefined;
    const { spacing } = this.deps;
    if (spacing !== undefined && (spacing.unsentAt(ip) > 0 || spacing.waitMs(ip) > 0)) return undefined;
    this.inUse.set(ip, used + 1);
    return granted(this.releaser(ip), spacing?.started(ip) ?? (() => {}));
  }

  private async slot(ip: string, signal?: AbortSignal): Promise<() => void> {
    // A signal aborted already calls no watcher: check it here.
    signal?.throwIfAborted();
    const used = this.inUse.get(ip) ?? 0;
    if (used < this.maxPerIp) {
      this.inUse.set(ip, used + 1);
      return this.releaser(ip);
    }
    await waitInLine(this.waiters, ip, signal);
    return this.releaser(ip);
  }

  /** A lone agent's host pace answers its own push-backs (see host-pace.ts): nothing more here. */
  refused(): void {}

  /** Spaces the starts at `ip` by `delayMs` at least (with no spacing given, nothing does). */
  crawlDelay(ip: string, delayMs: number): void {
    this.deps.spacing?.raise(ip, delayMs);
  }

  /** How long a request to `ip` would wait for the spacing of its starts, ms. */
  spacingWaitMs(ip: string): number {
    return this.deps.spacing?.waitMs(ip) ?? 0;
  }

  /**
   * A lone agent keeps its addresses itself: its line is its requests waiting for a slot; a push-back
   * slows the refused host (host-pace.ts), not the address.
   */
  politenessAt(ip: string): IpPoliteness {
    return {
      line: this.waiters.get(ip)?.length ?? 0,
      blockedUntilMs: 0,
      delayMs: this.deps.spacing?.delayOf(ip) ?? 0,
    };
  }

  /** Requests in flight to `ip`. */
  inFlight(ip: string): number {
    return this.inUse.get(ip) ?? 0;
  }

  private releaser(ip: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.get(ip)?.shift();
      if (next) {
        next(); // the slot passes straight to the next waiter
        return;
      }
      this.waiters.delete(ip);
      const used = (this.inUse.get(ip) ?? 1) - 1;
      if (used === 0) this.inUse.delete(ip);
      else this.inUse.set(ip, used);
    };
  }
}
