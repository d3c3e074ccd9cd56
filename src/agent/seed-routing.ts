import type { ForcedOutcome, Frontier, HostScheduler } from "../frontier/index.js";
import { hostKey, inScope, normalizeUrl } from "../url/index.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { LinkRouter } from "./link-router.js";

/** What {@link Agent.start} did with the seeds, each counted once. */
export interface SeedRouting {
  /** Seeds that are http(s) URLs. */
  readonly given: number;
  /** Seeds queued here: never seen before in this data dir. */
  readonly queued: number;
  /** Seeds of hosts other agents own, sent to them (whether they are new is theirs to know). */
  readonly sentAway: number;
  /** Seeds of this agent's hosts seen before in this data dir: done, or queued since an earlier run. */
  readonly seenBefore: number;
  /** Seeds outside `--scope`. */
  readonly outOfScope: number;
  /** Fetch failures by class counted in this data dir before this start (the stats' are cumulative). */
  readonly errorsBefore: Readonly<Record<string, number>>;
}

/** What {@link routeSeeds} routes seeds through and reads back to tell where each went. */
export interface SeedRoutingDeps {
  readonly frontier: Pick<Frontier, "waitingUrls">;
  readonly router: Pick<LinkRouter, "route">;
  readonly stats: Pick<CrawlStats, "dropped" | "errors">;
  /**
   * True when `url` of `host` belongs to another agent (in a cluster, under the current view); absent
   * for a lone agent.
   */
  readonly ownedElsewhere?: (url: string, host: string) => boolean;
}

/**
 * Routes each seed as a link at depth 0 (queued here unless seen before, or sent to its owner) and
 * counts where it went, told apart by what the routing changed: the frontier grew, a scope drop was
 * counted, or the owner is another agent; else it was seen before.
 */
export function routeSeeds(seeds: readonly string[], deps: SeedRoutingDeps): SeedRouting {
  const { frontier, router, stats } = deps;
  const routing = { given: 0, queued: 0, sentAway: 0, seenBefore: 0, outOfScope: 0 };
  const errorsBefore = Object.fromEntries(stats.errors);
  for (const seed of seeds) {
    const url = normalizeUrl(seed);
    if (url === null) continue;
    routing.given++;
    const waiting = frontier.waitingUrls;
    const outOfScope = stats.dropped.get("scope") ?? 0;
    router.route(url, 0, undefined);
    if (frontier.waitingUrls > waiting) routing.queued++;
    else if ((stats.dropped.get("scope") ?? 0) > outOfScope) routing.outOfScope++;
    else if (deps.ownedElsewhere?.(url, hostKey(url))) routing.sentAway++;
    else routing.seenBefore++;
  }
  return { ...routing, errorsBefore };
}

/** What {@link forceSeed} queues through. */
export interface ForcedSeedDeps {
  readonly frontier: Pick<Frontier, "forceAdd" | "commit">;
  readonly scheduler: Pick<HostScheduler, "markReady">;
  readonly stats: Pick<CrawlStats, "recordDrop">;
  /** `--scope`: the hosts this crawl may reach. */
  readonly scopes: readonly string[];
}

/**
 * Queues seed `url` (`ctl add-seeds --force`) on the agent owning its host, even when seen before,
 * unless it is done already or out of --scope; durable when it resolves.
 */
export async function forceSeed(url: string, deps: ForcedSeedDeps): Promise<ForcedOutcome | "out-of-scope"> {
  const { frontier, scheduler, stats } = deps;
  const host = hostKey(url);
  if (!inScope(host, deps.scopes)) {
    stats.recordDrop("scope");
    return "out-of-scope";
  }
  const outcome = await frontier.forceAdd(url, 0, host);
  await frontier.commit();
  if (outcome !== "done-before") scheduler.markReady(host);
  return outcome;
}
