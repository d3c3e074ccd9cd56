import { type ChangeFrequency, readChangeFrequency } from "../change-frequency.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { FetchResult } from "../fetching/index.js";
import { responseHeader } from "../fetching/index.js";
import type { PayloadOriginal } from "../storage/index.js";

/**
 * What a visit found of a page fetched before: `not-modified` (the server answered 304 to a
 * conditional GET), `unchanged` (a 200 whose payload digest is the last one's) or `changed`.
 */
export type PageChange = "not-modified" | "unchanged" | "changed";

/** The stored response holding a page's payload, and that payload's `sha1:` digest. */
export interface StoredCapture {
  readonly digest: string;
  readonly original: PayloadOriginal;
}

/**
 * What a recrawl keeps of one done URL, durably with its done record (the state store's `page` op):
 * its validators for a conditional GET, its last capture for revisit records, the visits and changes
 * the change-rate estimator reads, and when it is due again.
 */
export interface PageHistory {
  /** The URL, for queuing it again. */
  readonly url: string;
  /** The URL's per-host depth, for queuing it again. */
  readonly depth: number;
  /** The last answer's `ETag`, sent back as `If-None-Match`. */
  readonly etag?: string;
  /** The last answer's `Last-Modified`, sent back as `If-Modified-Since`. */
  readonly lastModified?: string;
  /** The response holding the page's current payload; absent when it had none to compare (an error page, a truncated body). */
  readonly capture?: StoredCapture;
  /** Fetches of the URL that got an answer. */
  readonly visits: number;
  /** Visits after the first that found the page changed. */
  readonly changes: number;
  /** Time between the first visit and the last, ms (the sum of the intervals the changes were looked for in). */
  readonly observedMs: number;
  /**
   * What the page's `Last-Modified` told of the intervals between visits where both answers had one
   * (see {@link LastModifiedRecord}); absent while none did.
   */
  readonly lastModifiedRecord?: LastModifiedRecord;
  /**
   * How long before its first visit the page last changed, ms, as its sitemap `<lastmod>` or its
   * `Last-Modified` date said (the later of the two): a hint of its change rate (about 1 / age, the
   * time since a Poisson process's last event being exponential with its rate) for as long as its own
   * visits are too few to tell. Absent when neither was given.
   */
  readonly ageAtFirstVisitMs?: number;
  /**
   * The `<changefreq>` a sitemap gave the page when it was first fetched: a hint of its intervals for
   * as long as its own visits are too few to tell (see `AdaptivePolicy`). Absent when none was given.
   */
  readonly changefreq?: ChangeFrequency;
  /** When the last visit started, ms since the epoch. */
  readonly lastAtMs: number;
  /** When the URL is due again, ms since the epoch; absent while it is queued, or when no revisit is planned. */
  readonly nextAtMs?: number;
}

/**
 * The intervals between visits whose answers both carried a `Last-Modified` date: how many, how many
 * saw it move (a change, and when it was), and how long the page is known to have stood unchanged
 * (the input of Cho and Garcia-Molina's last-modified estimator). `trusted` turns false for good once
 * the date contradicted the payload (the bytes changed under an unchanged date, as a server stamping
 * a fixed date does): the estimate then comes from the visits alone.
 */
export interface LastModifiedRecord {
  readonly intervals: number;
  readonly changes: number;
  /** Time known unchanged, ms: a whole interval without a change, else the time from the change to the visit. */
  readonly exposureMs: number;
  readonly trusted: boolean;
}

/** A visit of a page, as {@link afterVisit} needs it. */
export interface PageVisit {
  readonly url: string;
  readonly depth: number;
  /** The answer (its validators are kept). */
  readonly result: Pick<FetchResult, "responseHeaders" | "startedAtMs" | "status">;
  /** What the visit found, when the page was fetched before. */
  readonly change?: PageChange;
  /** The response holding the payload now, when it has one. */
  readonly capture?: StoredCapture;
  /** The `<lastmod>` a sitemap gave the page (W3C datetime), when queued from one. */
  readonly sitemapLastmod?: string;
  /** The `<changefreq>` a sitemap gave the page, when queued from one. */
  readonly sitemapChangefreq?: ChangeFrequency;
}

/** The history of a page after `visit`, from `previous` (undefined: its first visit); no next time yet. */
export function afterVisit(previous: PageHistory | undefined, visit: PageVisit): PageHistory {
  const { result } = visit;
  // A 304 repeats no validator it did not change: the stored ones hold.
  const notModified = visit.change === "not-modified";
  const etag = responseHeader(result, "etag") ?? (notModified ? previous?.etag : undefined);
  const lastModified =
    responseHeader(result, "last-modified") ?? (notModified ? previous?.lastModified : undefined);
  const first = previous === undefined;
  const capture = notModified ? previous?.capture : visit.capture;
  const lastModifiedRecord = first ? undefined : nextLastModifiedRecord(previous, visit, lastModified);
  const ageAtFirstVisitMs = first ? ageOf(visit, lastModified) : previous.ageAtFirstVisitMs;
  const changefreq = first ? visit.sitemapChangefreq : previous.changefreq;
  return {
    url: visit.url,
    depth: visit.depth,
    ...(etag === undefined ? {} : { etag }),
    ...(lastModified === undefined ? {} : { lastModified }),
    ...(capture === undefined ? {} : { capture }),
    visits: (previous?.visits ?? 0) + 1,
    changes: (previous?.changes ?? 0) + (!first && visit.change === "changed" ? 1 : 0),
    observedMs: first ? 0 : previous.observedMs + Math.max(0, result.startedAtMs - previous.lastAtMs),
    ...(lastModifiedRecord === undefined ? {} : { lastModifiedRecord }),
    ...(ageAtFirstVisitMs === undefined ? {} : { ageAtFirstVisitMs }),
    ...(changefreq === undefined ? {} : { changefreq }),
    lastAtMs: result.startedAtMs,
  };
}

/**
 * How far into the second its HTTP date names a change came, on average, ms: HTTP dates have whole
 * seconds, so a page changed at 12:00:00.9 says 12:00:00. Counting its exposure from the date itself
 * adds half a second a change: a page changing every 2 s was estimated at 0.8× its rate.
 */
const DATE_ROUNDING_MS = 500;

/**
 * The {@link LastModifiedRecord} after a revisit whose answer has the date `lastModified` (a 304 keeps
 * the stored one): an interval more when both this answer and the last had a readable date. The date
 * moving is a change, known unchanged from within that date's second on ({@link DATE_ROUNDING_MS};
 * within the interval: the server's clock is not ours); the date standing still is none, the whole
 * interval unchanged — unless the payload changed all the same, which makes the dates untrusted.
 */
function nextLastModifiedRecord(
  previous: PageHistory,
  visit: PageVisit,
  lastModified: string | undefined,
): LastModifiedRecord | undefined {
  const kept = previous.lastModifiedRecord;
  const before = httpDateMs(previous.lastModified);
  const now = httpDateMs(lastModified);
  if (before === undefined || now === undefined) return kept;
  const intervalMs = Math.max(0, visit.result.startedAtMs - previous.lastAtMs);
  const moved = now !== before;
  const record = kept ?? { intervals: 0, changes: 0, exposureMs: 0, trusted: true };
  return {
    intervals: record.intervals + 1,
    changes: record.changes + (moved ? 1 : 0),
    exposureMs:
      record.exposureMs +
      (moved
        ? Math.min(intervalMs, Math.max(0, visit.result.startedAtMs - now - DATE_ROUNDING_MS))
        : intervalMs),
    trusted: record.trusted && (moved || visit.change !== "changed"),
  };
}

/**
 * How long before `visit` the page last changed, from the later of its sitemap `<lastmod>` and its
 * `Last-Modified` (a date in the future, a server clock ahead, counts as a second); undefined without one.
 */
function ageOf(visit: PageVisit, lastModified: string | undefined): number | undefined {
  const dates = [httpDateMs(visit.sitemapLastmod), httpDateMs(lastModified)].filter((ms) => ms !== undefined);
  if (dates.length === 0) return undefined;
  return Math.max(1000, visit.result.startedAtMs - Math.max(...dates));
}

/** An HTTP date (`Last-Modified`) or a W3C datetime as ms since the epoch; undefined when absent or unreadable. */
function httpDateMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The conditional request headers of a fetch of a page with `history`: `If-None-Match` with its ETag,
 * `If-Modified-Since` with its Last-Modified (RFC 9110 lets a client send both; the server weighs the
 * ETag first). None without a capture to refer a 304 to.
 */
export function conditionalHeaders(history: PageHistory | undefined): [string, string][] {
  if (history?.capture === undefined) return [];
  const headers: [string, string][] = [];
  if (history.etag !== undefined) headers.push(["if-none-match", history.etag]);
  if (history.lastModified !== undefined) headers.push(["if-modified-since", history.lastModified]);
  return headers;
}

/**
 * Of two histories of one page (this agent's and one handed over with its host), the one that saw the
 * later visit, `handed` on a tie (then more visits win): what the page's new owner keeps. The later
 * visit knows the page's newest validators and capture, and its agent planned the next visit last.
 */
export function laterHistory(kept: PageHistory | undefined, handed: PageHistory): PageHistory {
  if (kept === undefined) return handed;
  if (kept.lastAtMs !== handed.lastAtMs) return kept.lastAtMs > handed.lastAtMs ? kept : handed;
  return kept.visits > handed.visits ? kept : handed;
}

/** The stored form of `history` (the state store's `page` value). */
export function encodeHistory(history: PageHistory): string {
  return JSON.stringify(history);
}

/**
 * `value` read back (a changefreq of no known value left out); a value that is not a history fails as
 * `StorageCorrupt`.
 */
export function decodeHistory(value: string): PageHistory {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (cause) {
    throw new UbiError(ErrorCode.StorageCorrupt, `unreadable page history: ${value.slice(0, 80)}`, { cause });
  }
  const history = parsed as Partial<PageHistory> | null;
  if (
    typeof history !== "object" ||
    history === null ||
    typeof history.url !== "string" ||
    typeof history.depth !== "number" ||
    typeof history.visits !== "number" ||
    typeof history.changes !== "number" ||
    typeof history.observedMs !== "number" ||
    typeof history.lastAtMs !== "number"
  ) {
    throw new UbiError(ErrorCode.StorageCorrupt, `not a page history: ${value.slice(0, 80)}`);
  }
  // A hint of no known value (a later version's) is left out: the page is planned without it.
  const { changefreq, ...rest } = history as PageHistory;
  const known = typeof changefreq === "string" ? readChangeFrequency(changefreq) : undefined;
  return known === changefreq
    ? (history as PageHistory)
    : { ...rest, ...(known === undefined ? {} : { changefreq: known }) };
}
