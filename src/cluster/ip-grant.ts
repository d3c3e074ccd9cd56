/**
 * The vocabulary shared by an address's authority and the agents asking it (see ip-authority.ts and
 * cluster-ip-gate.ts): what an ask is answered, what a hand-over carries, and the protocol's timings.
 */

/** Whose requests `--max-per-ip` counts: each agent's own, or the whole cluster's. */
export const IP_LIMITS = ["agent", "cluster"] as const;

/** One of {@link IP_LIMITS}. */
export type IpLimit = (typeof IP_LIMITS)[number];

/**
 * Whose requests `--max-per-ip` counts unless told: the whole cluster's, polite per server whichever
 * agents own its hosts. It costs 2.6–10.3% of pages/s where addresses are not shared (bench/README).
 */
export const DEFAULT_IP_LIMIT: IpLimit = "cluster";

/** How an address's authority (`IpAuthority`, ip-authority.ts) grants. */
export interface IpAuthorityOptions {
  /** Requests at once to one address, cluster-wide (`--max-per-ip`). */
  readonly maxPerIp: number;
  /** The least time between two request starts at one address, cluster-wide (`--ip-delay-ms`), ms. */
  readonly ipDelayMs: number;
  /** How long an exclusive lease lasts unless renewed, ms. */
  readonly leaseTtlMs: number;
  /** How long a granted slot lasts when its release never comes (a fetch's longest time and a margin), ms. */
  readonly slotTtlMs: number;
  /**
   * How late another agent may still grant for an address this agent has just become the authority of,
   * ms: its last leases and slots, and the time its view takes to catch up with this one's.
   */
  readonly graceMs: number;
}

/** An authority's answer to an ask. */
export type IpGrant =
  /** The asker is the address's only user: it applies the limit itself until `ttlMs` from its ask. */
  | {
      readonly kind: "lease";
      /**
       * The lease's id, the same while it is renewed, unique across its authority's addresses and lives
       * (another authority's may meet it: that matters only for two leases of one agent at one address
       * drawn the same id): its holder's releases of it name it (undefined: an authority that predates
       * lease ids).
       */
      readonly leaseId?: number;
      readonly ttlMs: number;
      readonly blockedForMs: number;
      /** The least gap between two starts there: the IP delay, or a longer Crawl-delay of one of its hosts, ms. */
      readonly delayMs: number;
    }
  /**
   * One request may start now; release `slotId` when it ends (it expires after `ttlMs` anyway). `heldMs`:
   * how long the ask was held before the grant (absent: not held).
   */
  | {
      readonly kind: "slot";
      readonly slotId: number;
      readonly ttlMs: number;
      readonly heldMs?: number;
      /** How long after its grant its request may start, ms (absent: {@link IP_START_SLACK_MS}). */
      readonly startSlackMs?: number;
    }
  /** Nothing may start now: ask again after `waitMs` (0: an ask held to its end, asked again at once). */
  | { readonly kind: "wait"; readonly waitMs: number }
  /** The lease renewed is over: another agent uses the address (or it lapsed). */
  | { readonly kind: "revoked" };

/** Requests of one agent's at one address that ended, as its release says them. */
export interface IpReleased {
  /** The slots of those that were granted one at a time. */
  readonly slotIds: readonly number[];
  /** How many of those it may have started under a lease ended, or never started (the lease ended). */
  readonly leaseSlots: number;
  /** The lease `leaseSlots` are of (undefined: unsaid, an agent that predates lease ids). */
  readonly leaseId?: number;
}

/** What an address's previous authority granted that may still run, as it hands the address over. */
export interface IpHandOver {
  /** Requests each agent may still have in flight there. */
  readonly held: ReadonlyMap<string, number>;
  /** How long they may still run at most, ms. */
  readonly untilMs: number;
  /**
   * How long each agent may still start requests there, ms, where known (a lease it holds); absent for
   * an agent: until {@link untilMs}. The starts of slots granted are in {@link spacedForMs}.
   */
  readonly startsFor?: ReadonlyMap<string, number>;
  /** How long the address is still blocked by a server's push-back, ms. */
  readonly blockedForMs: number;
  /** How long the next request there must wait for the IP delay still, ms. */
  readonly spacedForMs: number;
  /**
   * How long nothing may be granted there, ms (absent: 0): the sender does not know all that may run
   * there (it awaited its own previous authority, or a crashed one's grace, or it has left).
   */
  readonly holdForMs?: number;
}

/** How long an exclusive lease lasts unless renewed, ms: a holder renews it every few seconds while it uses it. */
export const IP_LEASE_TTL_MS = 5_000;

/** How long an agent asking for slots waits at most before asking again, ms (when its ask is not held). */
export const IP_POLL_MS = 100;

/**
 * How long an agent asks the authority to hold an ask for a slot at a full address, ms: it is answered
 * as soon as a slot frees for it (see `IpAuthority.askHeld`), within the transport's deadline.
 */
export const IP_HOLD_MS = 1_000;

/** How long an authority holds an ask at most, whatever the asker asked, ms. */
export const IP_MAX_HOLD_MS = 2_000;

/**
 * How long after its ask an agent may still start the request of a slot granted, ms, beyond its round
 * trips to the authority (see {@link startSlackFor}). An authority cannot know when a granted request
 * starts, only that it starts within the slack of the grant (the asker gives back a slot that came
 * later): it spaces its grants by the IP delay and the slack.
 */
export const IP_START_SLACK_MS = 100;

/** The longest start slack an authority grants, whatever the asker asked, ms (see {@link startSlackFor}). */
export const IP_MAX_START_SLACK_MS = 1_000;

/**
 * The start slack an agent asks of an authority it reaches in `roundTripMs` (the least of its recent
 * round trips there): {@link IP_START_SLACK_MS} beyond two of them (its ask may wait for the message in
 * flight there before it goes), within {@link IP_MAX_START_SLACK_MS}. The slack counts from the grant,
 * which the asker can only bound by its ask: with no allowance for the round trip, every slot from an
 * authority 100 ms away came too late, was given back, and its address got no request at all. Any
 * slack is safe, as both sides count the same one; a longer one only spaces the slots further apart.
 */
export function startSlackFor(roundTripMs: number): number {
  const tripsMs = 2 * Math.max(0, Math.ceil(roundTripMs));
  return Math.min(IP_MAX_START_SLACK_MS, IP_START_SLACK_MS + tripsMs);
}

/** The start slack an authority grants an ask for `askedMs` (0 or absent: an asker that said none). */
export function grantedStartSlack(askedMs: number | undefined): number {
  return Math.min(IP_MAX_START_SLACK_MS, Math.max(IP_START_SLACK_MS, askedMs ?? 0));
}

/**
 * How long an authority applies a Crawl-delay reported for an address, ms: the agents crawling hosts
 * that ask for one report it again every {@link IP_CRAWL_DELAY_REPORT_MS} while they do.
 */
export const IP_CRAWL_DELAY_MEMORY_MS = 60_000;

/** How often an agent reports again a Crawl-delay of an address it still sends requests to, ms. */
export const IP_CRAWL_DELAY_REPORT_MS = 20_000;
