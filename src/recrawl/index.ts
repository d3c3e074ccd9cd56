/** Continuous crawling (`--recrawl`): page histories, conditional GETs, change-rate estimates and revisit schedules. */

export {
  averageFreshness,
  estimateChangeRate,
  estimateChangeRateFromLastModified,
  expectedFreshness,
  marginalFreshness,
  optimalFrequencies,
  proportionalFrequencies,
} from "./change-rate.js";
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
  type HandedHistories,
  type PageRevisits,
  type RecrawlCounts,
  Recrawler,
  type RecrawlerDeps,
  type RevisitFigures,
} from "./recrawler.js";
export {
  AdaptivePolicy,
  type BudgetOf,
  type BudgetSharing,
  ESTIMATE_REACH,
  estimatedRate,
  FixedPolicy,
  FOLLOW_BUDGET_BEYOND,
  FOLLOW_BUDGET_EVERY_MS,
  HINT_SPAN,
  hintedPeriodMs,
  MIN_INTERVALS_FOR_ESTIMATE,
  RECRAWL_MODES,
  type RecrawlMode,
  type RecrawlOptions,
  type RevisitPolicy,
  rateEvidence,
  revisitPolicy,
  validateRecrawlOptions,
} from "./revisit-policy.js";
