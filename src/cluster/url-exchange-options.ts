import { ErrorCode, UbiError } from "../errors.js";
import { FlushPolicy } from "./flush-policy.js";

/** URLs per batch at most, and the size that makes a batch go at once (`--batch-urls`). */
export const DEFAULT_BATCH_URLS = 1000;

/** Options of a `UrlExchange` (see url-exchange.ts). */
export interface UrlExchangeOptions {
  /** URLs per batch at most; a full buffer is sent at once. @default {@link DEFAULT_BATCH_URLS} */
  readonly maxBatchUrls?: number;
  /** URLs that make a batch worth sending at once (see {@link FlushPolicy}). @default {@link DEFAULT_BATCH_URLS} */
  readonly targetBatchUrls?: number;
  /** Longest a URL waits in a buffer before its batch is sent. @default 30000 */
  readonly flushDelayMs?: number;
  /**
   * Wait of an urgent batch (its destination is short of work, or this agent is idle): a burst of links
   * still travels together, and a peer left idle at the end of a crawl by links that are all duplicates
   * does not get one batch per page. Capped at `flushDelayMs`. @default 250
   */
  readonly urgentDelayMs?: number;
  /** A destination whose heartbeat reports fewer queued URLs is short of work. @default 20 */
  readonly starvingQueuedUrls?: number;
  /** First retry delay of a failed batch; doubles up to `retryMaxMs`. @default 200 */
  readonly retryMinMs?: number;
  /** @default 5000 */
  readonly retryMaxMs?: number;
}

const DEFAULTS = {
  maxBatchUrls: DEFAULT_BATCH_URLS,
  targetBatchUrls: DEFAULT_BATCH_URLS,
  flushDelayMs: 30_000,
  urgentDelayMs: 250,
  starvingQueuedUrls: 20,
  retryMinMs: 200,
  retryMaxMs: 5000,
} as const;

/** Options that may be 0. */
const MAY_BE_ZERO = new Set(["flushDelayMs", "urgentDelayMs", "starvingQueuedUrls"]);

/**
 * `options` with their defaults filled in; throws `InvalidArgument` when one is not a positive integer
 * (or, for those that may be, 0).
 */
export function resolveExchangeOptions(options: UrlExchangeOptions): Required<UrlExchangeOptions> {
  const resolved = { ...DEFAULTS, ...options };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isInteger(value) || value < (MAY_BE_ZERO.has(name) ? 0 : 1)) {
      throw new UbiError(ErrorCode.InvalidArgument, `${name} must be a positive integer, got ${value}`);
    }
  }
  return resolved;
}

/** The flush policy of an exchange with these (resolved) options: its targets capped by their maxima. */
export function flushPolicyOf(options: Required<UrlExchangeOptions>): FlushPolicy {
  const { maxBatchUrls, targetBatchUrls, flushDelayMs, urgentDelayMs, starvingQueuedUrls } = options;
  return new FlushPolicy({
    targetBatchUrls: Math.min(targetBatchUrls, maxBatchUrls),
    maxDelayMs: flushDelayMs,
    urgentDelayMs: Math.min(urgentDelayMs, flushDelayMs),
    starvingQueuedUrls,
  });
}
