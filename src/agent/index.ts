/**
 * One crawler agent: its options, the pipeline that crawls (frontier, scheduler, host visitor, fetcher,
 * archive) and the narrow surface the cluster layer drives it through.
 */

export { Agent } from "./agent.js";
export { QUANTUM_PAGES, UNSYNCED_PAGES_PER_HOST } from "./agent-assembly.js";
export { AGENT_DEFAULTS, type AgentOptions, ipDelayOf, productToken } from "./agent-options.js";
export type { RuntimeBlacklist } from "./blacklist-control.js";
export {
  addRestores,
  type BlacklistRemoval,
  type BlacklistRestore,
  describeRestore,
  NO_RESTORE,
  type RestoredByMerge,
} from "./blacklist-restore.js";
export type { AgentStorage, ClusterFacingAgent } from "./cluster-facing.js";
export type { ClusterHooks } from "./cluster-hooks.js";
export type { Admission } from "./crawl-rights.js";
export {
  type CrawlCounters,
  CrawlStats,
  communicationOverhead,
  type DropReason,
  type PeerTraffic,
} from "./crawl-stats.js";
export { type HandedOverWatch, HandsChanges } from "./hands-changes.js";
export type { BlacklistEntry, BlacklistMerge } from "./host-blacklist.js";
export {
  type BusyIp,
  byActivity,
  DEFAULT_MAX_HOSTS_PER_IP,
  DEFAULT_MAX_IPS,
  HOST_NAMES_LISTED,
} from "./ip-activity.js";
export type { UrlExchange, UrlOwnership } from "./link-router.js";
export { crawlSummary, ProgressReporter } from "./progress.js";
export type { ScrubCounts } from "./warc-scrub.js";
