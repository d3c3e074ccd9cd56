import type { Frontier } from "../frontier/index.js";
import type { UrlTraits } from "../storage/index.js";
import { hostKey, inScope } from "../url/index.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { CrossOver } from "./cross-over.js";
import type { LinkOrigins } from "./link-origins.js";

/** Who owns a URL: the agent's current assignment (one agent alone owns everything). */
export interface UrlOwnership {
  /** Id of the agent owning `url`, of host `host`, in this agent's current view (by host or by URL). */
  ownerOfUrl(url: string, host: string): string;
}

/** Where links owned by other agents go: batched to their owner. */
export interface UrlExchange {
  /** Queues `url` (of `host`) for `owner`, with its traits (the attempts that failed here, …). */
  send(owner: string, url: string, depth: number, host: string, traits?: UrlTraits): void;
  /**
   * Queues `url`, a link found on a page (or a sitemap), for `owner`, unless this agent handed it away
   * before: the owner has it then (or, if it dies, gets it from this agent's outbox).
   */
  offer(owner: string, url: string, depth: number, host: string, traits?: UrlTraits): void;
}

/**
 * What becomes of a link found on a page that another agent owns (its host's owner, or the URL's own
 * under `--partition url`) — Cho and Garcia-Molina's modes of a
 * parallel crawler: sent to its owner (`exchange`), dropped (`firewall`), or held and crawled here once
 * this agent's own hosts are done (`cross`, see {@link CrossOver}). Seeds and URLs received from other
 * agents go to their owners in every mode.
 */
export const LINK_MODES = ["exchange", "firewall", "cross"] as const;

/** One of {@link LINK_MODES}. */
export type LinkMode = (typeof LINK_MODES)[number];

/** Options of a {@link LinkRouter}. */
export interface LinkRouterOptions {
  /** Per-host depth limit: URLs deeper than this are not queued. */
  readonly maxDepth: number;
  /** Domains the crawl stays in; empty means a broad crawl. */
  readonly scopes: readonly string[];
  /** What becomes of links found on pages that other agents own. */
  readonly mode: LinkMode;
  /** URLs every agent knows: never sent to their owners, who have them as seeds. */
  readonly replicated?: ReadonlySet<string>;
}

/** What a {@link LinkRouter} needs. */
export interface LinkRouterDeps {
  readonly selfId: string;
  readonly ownership: () => UrlOwnership;
  readonly frontier: Frontier;
  readonly exchange: UrlExchange | undefined;
  readonly stats: CrawlStats;
  /** Where the `cross` mode holds links to other agents' hosts (present in that mode only). */
  readonly crossOver?: CrossOver;
  /**
   * Where links queued here from pages of other hosts are noted, by the host they were found on, to be
   * given to another agent to keep when that host is handed over (in a cluster; see link-origins.ts).
   */
  readonly origins?: LinkOrigins;
}

/**
 * The fork in a discovered URL's path: computes its per-host depth, drops it when too deep or out of
 * scope, and sends it to this agent's frontier or to its owner (its host's, or its own under URL
 * partitioning).
 */
export class LinkRouter {
  constructor(
    private readonly options: LinkRouterOptions,
    private readonly deps: LinkRouterDeps,
  ) {}

  /**
   * Routes canonical `url` found on a page (or redirect) of `fromHost` at `fromDepth`; seeds pass
   * `fromHost` undefined. Depth is per host: 0 when the link crosses hosts, the parent's + 1 otherwise.
   */
  route(url: string, fromDepth: number, fromHost: string | undefined, traits: UrlTraits = {}): void {
    const host = hostKey(url);
    const depth = host === fromHost ? fromDepth + 1 : 0;
    this.dispatch(url, depth, host, fromHost === undefined ? "seed" : "link", traits, fromHost);
  }

  /**
   * Routes `url` of `host` at a depth already computed, with its traits: URLs received from peers, sent
   * again after a crash or a failed batch. These go to another agent even when this one handed them
   * away before.
   */
  routeAt(url: string, depth: number, host: string, traits: UrlTraits = {}): void {
    this.dispatch(url, depth, host, "given", traits);
  }

  /**
   * Routes `url` of `host`, kept aside while its host was blacklisted, at its depth and with its traits:
   * dropped if now too deep or out of scope, queued here though seen before (it was never fetched) when
   * this agent owns it, else sent to its owner, who queues it unless it has it already.
   */
  restore(url: string, depth: number, host: string, traits: UrlTraits = {}): "here" | "sent" | "dropped" {
    const { stats } = this.deps;
    if (depth > this.options.maxDepth) {
      stats.recordDrop("depth");
      return "dropped";
    }
    if (!inScope(host, this.options.scopes)) {
      stats.recordDrop("scope");
      return "dropped";
    }
    if (this.ownsHere(url, host) || this.deps.exchange === undefined) {
      this.deps.frontier.requeue(url, depth, host, traits);
      return "here";
    }
    this.deps.exchange.send(this.deps.ownership().ownerOfUrl(url, host), url, depth, host, traits);
    return "sent";
  }

  /** True when this agent owns `url` (of `host`) in its current view (always, alone). */
  ownsHere(url: string, host: string): boolean {
    return (
      this.deps.exchange === undefined || this.deps.ownership().ownerOfUrl(url, host) === this.deps.selfId
    );
  }

  /**
   * `traits` (failed attempts, a sitemap mark, a lastmod, a changefreq) go with the URL, queued here or sent. `origin`
   * says where the URL comes from: a link found on a page (the only kind the mode applies to), a seed,
   * or a URL given at a depth already computed.
   */
  private dispatch(
    url: string,
    depth: number,
    host: string,
    origin: "link" | "seed" | "given",
    traits: UrlTraits,
    fromHost?: string,
  ): void {
    const { stats } = this.deps;
    if (depth > this.options.maxDepth) {
      // Not marked seen: a shallower path may still bring it in.
      stats.recordDrop("depth");
      return;
    }
    if (!inScope(host, this.options.scopes)) {
      stats.recordDrop("scope");
      return;
    }
    const owner = this.deps.ownership().ownerOfUrl(url, host);
    // A host crossed into (cross-over mode) has its URLs queued here, whoever owns it.
    if (
      owner === this.deps.selfId ||
      this.deps.exchange === undefined ||
      this.deps.crossOver?.isAdopted(host)
    ) {
      const queued = this.deps.frontier.add(url, depth, host, traits);
      // Found on another host's page and queued here: known here alone once that host is handed over.
      if (queued && fromHost !== undefined && fromHost !== host && owner === this.deps.selfId) {
        this.deps.origins?.note(fromHost, { url, depth, host, traits });
      }
    } else if (origin === "given") {
      this.deps.exchange.send(owner, url, depth, host, traits);
    } else if (this.options.replicated?.has(url)) {
      this.deps.stats.recordDrop("replicated");
    } else if (origin === "seed" || this.options.mode === "exchange") {
      this.deps.exchange.offer(owner, url, depth, host, traits);
    } else {
      this.keepOrDrop(url, depth, host, traits);
    }
  }

  /** The firewall and cross-over modes' link that another agent owns. */
  private keepOrDrop(url: string, depth: number, host: string, traits: UrlTraits): void {
    const { crossOver, stats } = this.deps;
    if (this.options.mode === "firewall" || crossOver === undefined) stats.recordDrop("firewall");
    else if (!crossOver.hold(url, depth, host, traits)) stats.recordDrop("cross-over-full");
  }
}
