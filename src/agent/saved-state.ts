import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { Logger } from "../logging/index.js";
import type { GroupCommit, StateStore } from "../storage/index.js";
import { getMeta, metaOp } from "../storage/index.js";
import { type CrawlCounters, CrawlStats } from "./crawl-stats.js";
import { type BlacklistEntry, checkPattern, HostBlacklist } from "./host-blacklist.js";

// What an agent reads back from its state's metadata when it opens: the crawl's counters and the host
// blacklist.

/** Key of the crawl's counters in the store's metadata. */
const COUNTERS_META_KEY = "counters";
/** The state's metadata key of the host blacklist (a JSON list of patterns). */
export const BLACKLIST_META_KEY = "blacklist";

/**
 * The crawl's counters as saved in `store`, wired to be saved again: they go with every batch that
 * changes the state, or with the next commit after they moved alone (retries, URL batches with nothing
 * new), so after a restart they match the state (and the crawl log). Stats report them once written
 * (CrawlStats.durable).
 */
export async function restoredStats(
  store: StateStore,
  committer: GroupCommit,
  clock: Clock,
): Promise<CrawlStats> {
  const stats = new CrawlStats(clock);
  const saved = await getMeta(store, COUNTERS_META_KEY);
  if (saved !== undefined) stats.restore(parseSaved(saved, "crawl counters") as CrawlCounters);
  let lastWritten = JSON.stringify(stats.durable);
  let inBatch: CrawlCounters | undefined;
  committer.beforeWrite((ops) => {
    const counters = stats.counters();
    const json = JSON.stringify(counters);
    if (ops.length > 0 || json !== lastWritten) {
      ops.push(metaOp(COUNTERS_META_KEY, json));
      lastWritten = json;
      inBatch = counters;
    }
  });
  committer.afterWrite(() => {
    if (inBatch !== undefined) stats.markDurable(inBatch);
    inBatch = undefined;
  });
  return stats;
}

/**
 * The blacklist saved in `store`: its entries, or the plain list of patterns saved before changes were
 * kept (taken as changed at time 0, so any later change wins); a pattern that no longer parses is left
 * out, saying so.
 */
export async function loadBlacklist(store: StateStore, logger: Logger): Promise<HostBlacklist> {
  const blacklist = new HostBlacklist();
  const saved = await getMeta(store, BLACKLIST_META_KEY);
  if (saved === undefined) return blacklist;
  for (const item of parseSaved(saved, "host blacklist") as (string | BlacklistEntry)[]) {
    const entry: BlacklistEntry =
      typeof item === "string" ? { pattern: item, blocked: true, changedAtMs: 0, changedBy: "" } : item;
    try {
      checkPattern(entry.pattern);
    } catch (error) {
      logger.warn({ event: "blacklist-entry-dropped", err: error }, "a saved blacklist entry is left out");
      continue;
    }
    blacklist.merge([entry]);
  }
  return blacklist;
}

/** A JSON record of the state's metadata, or a storage error naming it. */
function parseSaved(json: string, what: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new UbiError(
      ErrorCode.StorageFailed,
      `the state's ${what} record is not valid JSON (${(error as Error).message}): the state is damaged`,
      { cause: error },
    );
  }
}

/** The state's metadata key of when this state began keeping blacklisted hosts' URLs aside (ms). */
export const ASIDE_SINCE_META_KEY = "aside-since";

/**
 * Since when (ms since the epoch) this state keeps the URLs it drops for a blacklisted host aside:
 * its first opening by a version that does, recorded then. A pattern added before that may have
 * dropped URLs that were not kept.
 */
export async function keptAsideSince(
  store: StateStore,
  committer: GroupCommit,
  clock: Clock,
): Promise<number> {
  const saved = await getMeta(store, ASIDE_SINCE_META_KEY);
  const since = saved === undefined ? Number.NaN : Number(saved);
  if (Number.isFinite(since)) return since;
  const now = clock.now();
  committer.add(metaOp(ASIDE_SINCE_META_KEY, String(now)));
  await committer.commit();
  return now;
}
