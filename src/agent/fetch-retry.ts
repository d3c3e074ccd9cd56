import { ErrorCode } from "../errors.js";

/**
 * Failures that may pass (a busy or restarting server, a dropped connection): the URL is tried again
 * later, up to `maxFetchAttempts` times, instead of leaving a hole in the crawl. Everything else (a
 * missing name, a body too large, a broken protocol) fails at once.
 */
const TRANSIENT_FAILURES: ReadonlySet<ErrorCode> = new Set([
  ErrorCode.ConnectFailed,
  ErrorCode.ConnectTimeout,
  ErrorCode.HeadersTimeout,
]);

/** Failures before any request reached the server: they do not count against a host's page limit. */
const NO_REQUEST_FAILURES: ReadonlySet<ErrorCode> = new Set([
  ErrorCode.DnsNotFound,
  ErrorCode.AddressForbidden,
  ErrorCode.TlsFailed,
]);

/** Hosts whose last URLs all failed this many times in a row get a single attempt per URL. */
export const FAILING_HOST_STREAK = 2;

/** How failed fetches are retried (the agent's `--max-fetch-attempts` and `--fetch-retry-ms`). */
export interface RetryPolicy {
  /** Attempts at a URL whose fetch failed transiently, the first included. */
  readonly maxFetchAttempts: number;
  /** Wait before the first retry; doubled at each further one. */
  readonly fetchRetryMs: number;
}

/** A fetch that just failed, and what its host's recent history says. */
export interface FailedFetch {
  readonly code: ErrorCode;
  /** The URL's attempts so far, this one included. */
  readonly attempts: number;
  /** The host's URLs given up in a row after transient failures, before this one. */
  readonly failedInARow: number;
  readonly nowMs: number;
  /** When the host's politeness lets the next request start. */
  readonly nextFetchAtMs: number;
}

/** True for a failure that may pass (see {@link retryAtMs}), which a host's failing streak counts. */
export function isTransient(code: ErrorCode): boolean {
  return TRANSIENT_FAILURES.has(code);
}

/**
 * When to try the URL again, or undefined when it fails for good: not a failure that may pass, out of
 * attempts, or a host whose last URLs all failed (a dead server would otherwise cost every queued URL
 * its full round of retries). Never before the host's politeness allows.
 */
export function retryAtMs(failed: FailedFetch, policy: RetryPolicy): number | undefined {
  if (!isTransient(failed.code) || failed.failedInARow >= FAILING_HOST_STREAK) return undefined;
  if (failed.attempts >= policy.maxFetchAttempts) return undefined;
  const waitMs = policy.fetchRetryMs * 2 ** (failed.attempts - 1);
  return Math.max(failed.nowMs + waitMs, failed.nextFetchAtMs);
}

/** Whether a URL that failed for good with `code` counts against its host's page limit (a request went out). */
export function countsAgainstPageLimit(code: ErrorCode): boolean {
  return !NO_REQUEST_FAILURES.has(code);
}
