/** Continuous crawling (`--recrawl`): page histories, conditional GETs and revisit schedules. */

export {
  afterVisit,
  conditionalHeaders,
  decodeHistory,
  encodeHistory,
  type PageChange,
  type PageHistory,
  type PageVisit,
  type StoredCapture,
} from "./page-history.js";
export { type PageRevisits, type RecrawlCounts, Recrawler, type RecrawlerDeps } from "./recrawler.js";
export {
  FixedPolicy,
  RECRAWL_MODES,
  type RecrawlMode,
  type RecrawlOptions,
  type RevisitPolicy,
  revisitPolicy,
  validateRecrawlOptions,
} from "./revisit-policy.js";
