import { changePeriodMs } from "../change-frequency.js";
import { estimateChangeRate, estimateChangeRateFromLastModified } from "./change-rate.js";
import type { PageHistory } from "./page-history.js";
import type { RateEvidence } from "./rate-prior.js";

/** Intervals a page's history must span before its own change-rate estimate is used. */
export const MIN_INTERVALS_FOR_ESTIMATE = 2;

/**
 * A page's change rate per second from its history (NaN while it is too short): Cho and
 * Garcia-Molina's last-modified estimator when the page's `Last-Modified` dates spanned enough
 * intervals and never contradicted its payload, else their estimator for regular visits, the mean
 * interval standing for I.
 */
export function estimatedRate(history: PageHistory): number {
  const dated = history.lastModifiedRecord;
  if (dated !== undefined && rateEvidence(history) !== undefined) {
    return estimateChangeRateFromLastModified(dated.intervals, dated.changes, dated.exposureMs / 1000);
  }
  const intervals = history.visits - 1;
  return intervals >= MIN_INTERVALS_FOR_ESTIMATE && history.observedMs > 0
    ? estimateChangeRate(intervals, history.changes, history.observedMs / intervals / 1000)
    : Number.NaN;
}

/**
 * What a page's `Last-Modified` dates showed, for the pages' common prior ({@link fitRatePrior}): the
 * evidence {@link estimatedRate} reads when it uses them; undefined when it does not.
 */
export function rateEvidence(history: PageHistory): RateEvidence | undefined {
  const dated = history.lastModifiedRecord;
  if (!(dated?.trusted && dated.intervals >= MIN_INTERVALS_FOR_ESTIMATE && dated.exposureMs > 0))
    return undefined;
  return { changes: dated.changes, exposureS: dated.exposureMs / 1000 };
}

/**
 * The time between changes a page's sitemap `<changefreq>` says (0 for `always`, infinite for `never`),
 * while the page has no estimate of its own; undefined without one, or once a visit contradicted it
 * (a page said to change `never` was found changed). A hint, not the truth: from its estimate on
 * ({@link estimatedRate}), the page's visits alone count.
 */
export function hintedPeriodMs(history: PageHistory): number | undefined {
  const { changefreq } = history;
  if (changefreq === undefined || (changefreq === "never" && history.changes > 0)) return undefined;
  return changePeriodMs(changefreq);
}
