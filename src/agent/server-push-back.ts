/**
 * What a crawler does when a server pushes back — 429 Too Many Requests or 503 Service Unavailable —
 * as RFC 9110 and careful crawlers (Heritrix, Scrapy's AutoThrottle) do: `Retry-After` holds the whole
 * host until then, and the host's request rate is halved at each refusal (its delay doubles) and grows
 * by a fixed step after each answered request (AIMD, as TCP's congestion window) — by a small one
 * once near the rate of the last refusal, which the server showed it does not take — so a crawl
 * settles near the rate the server takes with few refusals instead of alternating bursts and waits.
 */

/** The statuses that say "slow down, then try again". */
export const PUSH_BACK_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** The longest `Retry-After` honoured, ms: a server asking for a day is asked again in an hour. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** The first back-off delay after a refusal, ms, when the host's delay was shorter. */
export const MIN_BACKOFF_MS = 250;

/** The longest back-off delay, ms. */
export const MAX_BACKOFF_MS = 60_000;

/** How much the host's request rate grows after each answered request, requests/s. */
export const RATE_STEP_PER_S = 0.25;

/**
 * How much the rate grows per answer once it is within {@link NEAR_CEILING} of the rate of the last
 * refusal, requests/s: the server's limit is approached, and probed past, slowly.
 */
export const CAREFUL_STEP_PER_S = 0.05;

/** The share of the last refused rate from which the rate grows by {@link CAREFUL_STEP_PER_S}. */
export const NEAR_CEILING = 0.9;

/** A back-off delay below this is dropped altogether, ms. */
const NEGLIGIBLE_BACKOFF_MS = 10;

/**
 * The wait a `Retry-After` value asks for, ms from `nowMs` (RFC 9110 §10.2.3: delay-seconds, or an
 * HTTP-date), capped at {@link MAX_RETRY_AFTER_MS}; undefined when absent or unreadable, 0 for a date
 * in the past.
 */
export function retryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  // An IMF-fixdate (or the obsolete forms Date.parse reads): it must name a weekday or a month.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const atMs = Date.parse(text);
  if (Number.isNaN(atMs)) return undefined;
  return Math.min(Math.max(0, atMs - nowMs), MAX_RETRY_AFTER_MS);
}

/** The back-off delay after a refusal: twice what it was, or than the host's delay, within bounds. */
export function backOff(backoffMs: number, hostDelayMs: number): number {
  return Math.min(Math.max(backoffMs, hostDelayMs, MIN_BACKOFF_MS / 2) * 2, MAX_BACKOFF_MS);
}

/**
 * The back-off delay after an answered request: the rate it allows a step higher, down to no delay;
 * the step is {@link CAREFUL_STEP_PER_S} once the rate nears the one a server last refused at
 * (`refusedAtMs`, that rate's delay; 0: none known), and the delay is then never dropped.
 */
export function easeOff(backoffMs: number, refusedAtMs = 0): number {
  if (backoffMs <= 0) return 0;
  const rate = 1000 / backoffMs;
  const ceiling = refusedAtMs > 0 ? 1000 / refusedAtMs : Number.POSITIVE_INFINITY;
  const step = rate + RATE_STEP_PER_S > NEAR_CEILING * ceiling ? CAREFUL_STEP_PER_S : RATE_STEP_PER_S;
  const delayMs = 1000 / (rate + step);
  return delayMs < NEGLIGIBLE_BACKOFF_MS && ceiling === Number.POSITIVE_INFINITY ? 0 : delayMs;
}
