import type { Clock, TimerHandle } from "../clock.js";
import type { UrlTraits } from "../storage/index.js";
import type { CrawlRights } from "./crawl-rights.js";

/**
 * Cho and Garcia-Molina's cross-over mode (*Parallel Crawlers*, §3): an agent crawls its own hosts, and
 * only when it runs out of them follows the links it found to other agents' hosts, crawling those hosts
 * itself instead of sending the links to their owners. Nothing is exchanged; coverage rises over the
 * firewall mode's, and pages are fetched twice (overlap) when two agents cross into the same host.
 *
 * Links to other agents' hosts are held here (in memory: a restart forgets them). When the agent has
 * nothing of its own left — no host active, ready or parked, no URL queued — every held link is
 * *adopted*: queued in the frontier, its host crawled here from then on, breadth-first and politely as
 * any host of this agent's, but with no claim on it: its owner may crawl it at the same time. An
 * adopted host's queue stays here on a view change (it is not this agent's to hand over).
 */

/** How often an agent checks whether its own work is out, to adopt the links it holds. */
export const CROSS_OVER_CHECK_MS = 100;

/** Most links to other agents' hosts held at once; past it, new ones are dropped (`cross-over-full`). */
export const MAX_HELD_LINKS = 1_000_000;

/** A link held for {@link CrossOver}. */
interface HeldLink {
  readonly depth: number;
  readonly host: string;
  readonly traits: UrlTraits;
}

/** What a {@link CrossOver} needs. */
export interface CrossOverDeps {
  readonly clock: Clock;
  /** True while the agent has nothing to do: no host active, ready or parked, no URL queued. */
  readonly outOfWork: () => boolean;
  /** Queues an adopted link in the frontier (one seen before is skipped). */
  readonly queue: (url: string, depth: number, host: string, traits: UrlTraits) => void;
  /** Called once a round of links is queued: commits them and wakes their hosts. */
  readonly adopted: () => void;
}

/** The cross-over mode's links to other agents' hosts, and the hosts this agent crossed into. */
export class CrossOver {
  private readonly held = new Map<string, HeldLink>();
  private readonly adoptedHosts = new Set<string>();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly deps: CrossOverDeps,
    private readonly maxHeld = MAX_HELD_LINKS,
  ) {}

  /** Links held, waiting for this agent's own work to run out. */
  get heldLinks(): number {
    return this.held.size;
  }

  /** True when this agent crossed into `host`: links to it are queued here. */
  isAdopted(host: string): boolean {
    return this.adoptedHosts.has(host);
  }

  /**
   * Holds `url`, a link to another agent's `host`, until this agent's own work runs out; false when
   * {@link MAX_HELD_LINKS} are held already (the link is dropped).
   */
  hold(url: string, depth: number, host: string, traits: UrlTraits): boolean {
    const before = this.held.get(url);
    if (before !== undefined) {
      // Found again at a shallower depth: that is the depth it is crawled at.
      if (depth < before.depth) this.held.set(url, { depth, host, traits });
      return true;
    }
    if (this.held.size >= this.maxHeld) return false;
    this.held.set(url, { depth, host, traits });
    return true;
  }

  /**
   * The agent's predicates widened to the adopted hosts: it crawls them (no hand-over to wait for, no
   * claim to hold) besides its own.
   */
  widen(rights: CrawlRights): Required<CrawlRights> {
    const crossed = (host: string) => this.adoptedHosts.has(host) && !rights.owns(host);
    return {
      owns: (host) => rights.owns(host) || this.adoptedHosts.has(host),
      admit: (host) => (crossed(host) ? 0 : (rights.admit?.(host) ?? 0)),
      mayFetch: (host) => crossed(host) || (rights.mayFetch ?? rights.owns)(host),
    };
  }

  /** Starts checking, every {@link CROSS_OVER_CHECK_MS}, whether to adopt the held links. */
  start(): void {
    if (this.timer !== undefined) return;
    const check = () => {
      this.adoptIfOutOfWork();
      this.timer = this.deps.clock.setTimeout(check, CROSS_OVER_CHECK_MS);
    };
    this.timer = this.deps.clock.setTimeout(check, CROSS_OVER_CHECK_MS);
  }

  /** Stops the checks; held links stay held. */
  stop(): void {
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Adopts every held link when the agent has nothing of its own to do; true when it did. */
  adoptIfOutOfWork(): boolean {
    if (this.held.size === 0 || !this.deps.outOfWork()) return false;
    const links = [...this.held];
    this.held.clear();
    for (const [, link] of links) this.adoptedHosts.add(link.host);
    for (const [url, link] of links) this.deps.queue(url, link.depth, link.host, link.traits);
    this.deps.adopted();
    return true;
  }
}
