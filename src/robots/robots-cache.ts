import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, invalidArgument, isUbiError, UbiError } from "../errors.js";
import { classifyFetchError, type Fetcher, failureReason, responseHeader } from "../fetching/index.js";
import {
  type RobotsMatching,
  RobotsRules,
  type RobotsRulesInit,
  type RobotsSnapshot,
} from "./robots-rules.js";
import { decodeRobotsTxt } from "./robots-text.js";

/** Options of {@link RobotsCache}. */
export interface RobotsCacheOptions {
  /**
   * Product token matched against `User-agent` lines, e.g. `ubicrawl` (not the full User-Agent header),
   * or {@link EVERY_CRAWLER} for a crawler without one: only the groups for every crawler apply.
   */
  userAgent: string;
  /** How long parsed and allow-all rules are reused, ms. @default 86400000 (24 h) */
  ttlMs?: number;
  /** robots.txt bytes parsed; the rest is ignored (RFC 9309 asks for at least 500 KiB). @default 512000 */
  maxBytes?: number;
  /** Redirects followed to reach robots.txt; one more makes it unavailable. @default 5 */
  maxRedirects?: number;
  /** Lower clamp of a Crawl-delay, ms. @default 0 */
  minCrawlDelayMs?: number;
  /**
   * Upper clamp of a Crawl-delay, ms: a longer one is crawled at this pace. A day by default, the
   * rules' own lifetime: a site asking for more is still crawled, one page a day, never dropped.
   * @default 86400000
   */
  maxCrawlDelayMs?: number;
  /** After an unavailable robots.txt (5xx, network error), when to ask again, ms. @default 60000 */
  unavailableRetryMs?: number;
  /** Origins kept; the oldest are dropped first. @default 100000 */
  maxEntries?: number;
}

/** Dependencies of {@link RobotsCache}. */
export interface RobotsCacheDeps {
  /** Fetches robots.txt (redirects are returned, not followed, and followed here). */
  fetcher: Pick<Fetcher, "fetch">;
  /** Time source for expiry. @default systemClock */
  clock?: Clock;
}

/** The `User-agent` value of the groups for every crawler, as the token of a crawler that has none. */
export const EVERY_CRAWLER = "*";
const ACCEPT = "text/plain,*/*;q=0.5";
/** @default of {@link RobotsCacheOptions.maxCrawlDelayMs}: one day. */
const DEFAULT_MAX_CRAWL_DELAY_MS = 86_400_000;
const LF = 0x0a;

/**
 * robots.txt per origin with RFC 9309 semantics: fetched once per origin while cached (concurrent callers
 * share the fetch), 2xx parsed, 4xx allow all, 5xx and network errors disallow all until a retry time.
 */
export class RobotsCache {
  readonly #matching: RobotsMatching;
  readonly #ttlMs: number;
  readonly #maxBytes: number;
  readonly #maxRedirects: number;
  readonly #unavailableRetryMs: number;
  readonly #maxEntries: number;
  readonly #fetcher: Pick<Fetcher, "fetch">;
  readonly #clock: Clock;
  readonly #entries = new Map<string, RobotsRules>();
  readonly #inflight = new Map<string, Promise<RobotsRules>>();

  /** @throws UbiError InvalidArgument for an invalid option. */
  constructor(options: RobotsCacheOptions, deps: RobotsCacheDeps) {
    const userAgent = options.userAgent;
    if (typeof userAgent !== "string" || !(userAgent === EVERY_CRAWLER || /^[A-Za-z_-]+$/.test(userAgent))) {
      invalidArgument(
        `userAgent must be a product token (letters, "_" and "-") or "${EVERY_CRAWLER}", got ${String(userAgent)}`,
      );
    }
    this.#ttlMs = nonNegative("ttlMs", options.ttlMs ?? 86_400_000);
    this.#maxBytes = positiveInteger("maxBytes", options.maxBytes ?? 500 * 1024);
    this.#maxRedirects = options.maxRedirects ?? 5;
    if (!(Number.isInteger(this.#maxRedirects) && this.#maxRedirects >= 0)) {
      invalidArgument(`maxRedirects must be an integer >= 0, got ${options.maxRedirects}`);
    }
    const minCrawlDelayMs = nonNegative("minCrawlDelayMs", options.minCrawlDelayMs ?? 0);
    const maxCrawlDelayMs = nonNegative(
      "maxCrawlDelayMs",
      options.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS,
    );
    if (minCrawlDelayMs > maxCrawlDelayMs) invalidArgument("minCrawlDelayMs must not exceed maxCrawlDelayMs");
    this.#unavailableRetryMs = nonNegative("unavailableRetryMs", options.unavailableRetryMs ?? 60_000);
    this.#maxEntries = positiveInteger("maxEntries", options.maxEntries ?? 100_000);
    this.#matching = { userAgent: userAgent.toLowerCase(), minCrawlDelayMs, maxCrawlDelayMs };
    this.#fetcher = deps.fetcher;
    this.#clock = deps.clock ?? systemClock;
  }

  /** Origins cached (expired ones included until asked for). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The rules for `origin` (`scheme://host[:port]`; a full URL is reduced to its origin), fetching
   * robots.txt when not cached or expired. Never rejects for fetch failures: they become `unavailable`.
   * Rejects with UbiError InvalidUrl when `origin` is not an http(s) URL.
   */
  get(origin: string): Promise<RobotsRules> {
    const answer = this.answer(origin);
    return answer instanceof Promise ? answer : Promise.resolve(answer);
  }

  /**
   * {@link get}, with rules cached and fresh given at once rather than as a promise: a caller that must
   * also stop waiting at a pause needs no race for them (most asks, once an origin's robots.txt is in).
   */
  answer(origin: string): RobotsRules | Promise<RobotsRules> {
    const now = this.#clock.now();
    let rules = this.#entries.get(origin);
    let key = origin;
    if (rules === undefined) {
      try {
        key = originOf(origin);
      } catch (error) {
        return Promise.reject(error);
      }
      rules = this.#entries.get(key);
    }
    if (rules !== undefined && now < rules.expiresAtMs) return rules;
    let pending = this.#inflight.get(key);
    if (pending === undefined) {
      pending = this.#fetchRules(key).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    return pending;
  }

  /** The cached rules for `origin` even if expired, without fetching. */
  peek(origin: string): RobotsRules | undefined {
    return this.#entries.get(origin) ?? this.#entries.get(originOf(origin));
  }

  /**
   * Puts persisted rules back (after a restart) unless they have expired; returns them, or `undefined`
   * when expired (the next {@link RobotsCache.get} fetches again).
   * @throws UbiError InvalidArgument for a malformed snapshot.
   */
  restore(snapshot: RobotsSnapshot): RobotsRules | undefined {
    const rules = RobotsRules.fromJSON(snapshot, this.#matching);
    if (this.#clock.now() >= rules.expiresAtMs) return undefined;
    this.#store(originOf(rules.origin), rules);
    return rules;
  }

  /** Forgets `origin`, so the next `get` fetches. */
  delete(origin: string): void {
    this.#entries.delete(origin);
    this.#entries.delete(originOf(origin));
  }

  async #fetchRules(origin: string): Promise<RobotsRules> {
    const rules = new RobotsRules(await this.#fetchOutcome(origin), this.#matching);
    // A request the agent's stop cut before it was sent taught nothing of the server: not kept.
    if (rules.error !== ErrorCode.Stopped) this.#store(origin, rules);
    return rules;
  }

  /** Follows redirects itself and maps the final answer to RFC 9309 statuses. */
  async #fetchOutcome(origin: string): Promise<RobotsRulesInit> {
    let url = `${origin}/robots.txt`;
    for (let hop = 0; ; hop++) {
      let result: Awaited<ReturnType<Fetcher["fetch"]>>;
      try {
        // Only a prefix is parsed, so only a prefix is downloaded (a 10 MB robots.txt costs 500 KiB).
        result = await this.#fetcher.fetch(url, { accept: ACCEPT, maxBodyBytes: this.#maxBytes });
      } catch (error) {
        const code = isUbiError(error) ? error.code : classifyFetchError(error);
        return { ...this.#unavailable(origin, code, undefined), reason: failureReason(error) };
      }
      const status = result.status;
      if (status >= 200 && status < 300) {
        return this.#valid(origin, "parsed", status, this.#decode(result.body, result.truncated));
      }
      if (status >= 300 && status < 400) {
        const location = responseHeader(result, "location");
        if (location === undefined || hop >= this.#maxRedirects) {
          return this.#unavailable(origin, ErrorCode.TooManyRedirects, status);
        }
        try {
          url = new URL(location, url).href;
        } catch {
          return this.#unavailable(origin, ErrorCode.TooManyRedirects, status);
        }
        continue;
      }
      if (status >= 400 && status < 500) return this.#valid(origin, "allow-all", status, undefined);
      return this.#unavailable(origin, undefined, status);
    }
  }

  #valid(
    origin: string,
    status: "parsed" | "allow-all",
    httpStatus: number,
    text: string | undefined,
  ): RobotsRulesInit {
    const now = this.#clock.now();
    return { origin, status, fetchedAtMs: now, expiresAtMs: now + this.#ttlMs, httpStatus, text };
  }

  #unavailable(
    origin: string,
    error: ErrorCode | undefined,
    httpStatus: number | undefined,
  ): RobotsRulesInit {
    const now = this.#clock.now();
    const retryAtMs = now + this.#unavailableRetryMs;
    return {
      origin,
      status: "unavailable",
      fetchedAtMs: now,
      expiresAtMs: retryAtMs,
      retryAtMs,
      error,
      httpStatus,
    };
  }

  /** The text, capped at `maxBytes`; a line cut by the cap is dropped rather than half-read. */
  #decode(body: Buffer, truncated: boolean): string {
    let bytes = body;
    if (truncated || bytes.length > this.#maxBytes) {
      bytes = bytes.subarray(0, this.#maxBytes);
      const lastLf = bytes.lastIndexOf(LF);
      if (lastLf !== -1) bytes = bytes.subarray(0, lastLf + 1);
    }
    return decodeRobotsTxt(bytes);
  }

  #store(origin: string, rules: RobotsRules): void {
    if (!this.#entries.has(origin) && this.#entries.size >= this.#maxEntries) {
      // Maps iterate in insertion order, so the first key is the oldest entry.
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(origin, rules);
  }
}

function originOf(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch (cause) {
    throw new UbiError(ErrorCode.InvalidUrl, `not an origin: ${origin}`, { cause });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UbiError(ErrorCode.InvalidUrl, `not an http(s) origin: ${origin}`);
  }
  return url.origin;
}

function nonNegative(name: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0))
    invalidArgument(`${name} must be a finite number >= 0, got ${value}`);
  return value;
}

function positiveInteger(name: string, value: number): number {
  if (!(Number.isSafeInteger(value) && value > 0))
    invalidArgument(`${name} must be a positive integer, got ${value}`);
  return value;
}
