/** Continuous crawling (`--recrawl`): page histories, conditional GETs, change-rate estimates and revisit schedules. */

export { type AdaptiveBounds, AdaptivePolicy, ESTIMATE_REACH, HINT_SPAN } from "./adaptive-policy.js";
export {
  averageFreshness,
  estimateChangeRate,
  estimateChangeRateFromLastModified,
  expectedFreshness,
  marginalFreshness,
  optimalFrequencies,
  proportionalFrequencies,
} from "./change-rate.js";
export { estimatedRate, hintedPeriodMs, MIN_INTERVALS_FOR_ESTIMATE, rateEvidence } from "./page-estimates.js";
export {
  afterVisit,
  conditionalHeaders,
  decodeHistory,
  encodeHistory,
  type LastModifiedRecord,
  laterHistory,
  type PageChange,
  type PageHistory,
  type PageVisit,
  type StoredCapture,
} from "./page-history.js";
export {
  fitRatePrior,
  type GammaPrior,
  MAX_PRIOR_CHANGES,
  MIN_PAGES_FOR_PRIOR,
  posteriorRate,
  type RateEvidence,
  STILL_BELIEF,
} from "./rate-prior.js";
export {
  RECRAWL_MODES,
  type RecrawlMode,
  type RecrawlOptions,
  revisitPolicy,
  revisitsEndAt,
  validateRecrawlOptions,
} from "./recrawl-options.js";
export {
  type HandedHistories,
  type PageRevisits,
  type RecrawlCounts,
  Recrawler,
  type RecrawlerDeps,
  type RevisitFigures,
} from "./recrawler.js";
export {
  type BudgetOf,
  type BudgetSharing,
  FixedPolicy,
  FOLLOW_BUDGET_BEYOND,
  FOLLOW_BUDGET_EVERY_MS,
  type RevisitPolicy,
} from "./revisit-policy.js";
