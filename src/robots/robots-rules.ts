import robotsParserModule from "robots-parser";
import { type ErrorCode, invalidArgument } from "../errors.js";
import { normalizePercentEscapes } from "../url/index.js";
import { normalizeRobotsText } from "./robots-text.js";

// robots-parser is CommonJS and its .d.ts declares an ESM default export: under NodeNext the default import
// is the parser function at runtime but is typed as the module object, hence the cast.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;
type Robot = ReturnType<typeof robotsParser>;

/** RFC 9309 outcome of fetching robots.txt: rules parsed, no rules (4xx), or unreachable (disallow all). */
export type RobotsStatus = "parsed" | "allow-all" | "unavailable";

/** How a {@link RobotsRules} reads its robots.txt: the product token and the crawl-delay clamp. */
export interface RobotsMatching {
  /** Product token matched case-insensitively against `User-agent` lines, e.g. `ubicrawl`. */
  userAgent: string;
  /** Lower clamp of a given Crawl-delay, ms. */
  minCrawlDelayMs: number;
  /** Upper clamp of a given Crawl-delay, ms. */
  maxCrawlDelayMs: number;
}

/** The JSON form of {@link RobotsRules}, for the agent's state store. */
export interface RobotsSnapshot {
  /** Format version. */
  v: 1;
  /** `scheme://host[:port]` the rules govern. */
  origin: string;
  status: RobotsStatus;
  fetchedAtMs: number;
  expiresAtMs: number;
  retryAtMs?: number;
  error?: ErrorCode;
  /** For `unavailable` after a failed fetch: the failure in words (e.g. the certificate problem). */
  reason?: string;
  /** HTTP status of the last response in the chain, when there was one. */
  httpStatus?: number;
  /** The robots.txt text as parsed (already capped), for `parsed` only. */
  text?: string;
}

/** Fields a cache sets when it builds rules from a fetch. */
export interface RobotsRulesInit {
  origin: string;
  status: RobotsStatus;
  fetchedAtMs: number;
  expiresAtMs: number;
  retryAtMs?: number;
  error?: ErrorCode;
  reason?: string;
  httpStatus?: number;
  text?: string;
}

/** What one origin's robots.txt allows, for one product token, until `expiresAtMs`. */
export class RobotsRules {
  /** `scheme://host[:port]` these rules govern. */
  readonly origin: string;
  /** Parsed rules, allow all (4xx), or unavailable (5xx, network error, redirect loop: disallow all). */
  readonly status: RobotsStatus;
  /** Crawl-delay for our product token (or `*`), clamped, ms; `undefined` when none is given. */
  readonly crawlDelayMs: number | undefined;
  /** That Crawl-delay as the file asks for it, before the clamp, ms; `undefined` when none is given. */
  readonly askedCrawlDelayMs: number | undefined;
  /** The `Sitemap:` URLs of the file, as written (any group, any host), in order; none unless parsed. */
  readonly sitemaps: readonly string[];
  /** When the robots.txt answer (or failure) was received, ms since the epoch. */
  readonly fetchedAtMs: number;
  /** When these rules must be fetched again, ms since the epoch. */
  readonly expiresAtMs: number;
  /** For `unavailable`: when to ask again (equals `expiresAtMs`). */
  readonly retryAtMs: number | undefined;
  /** For `unavailable` after a failed fetch: why. */
  readonly error: ErrorCode | undefined;
  /** For `unavailable` after a failed fetch: the failure in words. */
  readonly reason: string | undefined;
  /** HTTP status of the last response, when one came. */
  readonly httpStatus: number | undefined;
  readonly #text: string | undefined;
  readonly #robot: Robot | undefined;
  readonly #userAgent: string;

  /** Builds rules; `init.text` is parsed when `status` is `parsed`. */
  constructor(init: RobotsRulesInit, matching: RobotsMatching) {
    this.origin = init.origin;
    this.status = init.status;
    this.fetchedAtMs = init.fetchedAtMs;
    this.expiresAtMs = init.expiresAtMs;
    this.retryAtMs = init.retryAtMs;
    this.error = init.error;
    this.reason = init.reason;
    this.httpStatus = init.httpStatus;
    this.#userAgent = matching.userAgent;
    if (init.status === "parsed") {
      this.#text = init.text ?? "";
      this.#robot = robotsParser(`${init.origin}/robots.txt`, normalizeRobotsText(this.#text));
      this.askedCrawlDelayMs = delayMs(this.#robot.getCrawlDelay(matching.userAgent));
      this.crawlDelayMs =
        this.askedCrawlDelayMs === undefined
          ? undefined
          : Math.min(matching.maxCrawlDelayMs, Math.max(matching.minCrawlDelayMs, this.askedCrawlDelayMs));
      this.sitemaps = this.#robot
        .getSitemaps()
        .map((url) => url.trim())
        .filter((url) => url !== "");
    } else {
      this.sitemaps = [];
    }
  }

  /** Rebuilds rules from {@link RobotsRules.toJSON} output. @throws UbiError InvalidArgument if malformed. */
  static fromJSON(snapshot: RobotsSnapshot, matching: RobotsMatching): RobotsRules {
    const s = snapshot as Partial<RobotsSnapshot> | null;
    if (
      s === null ||
      typeof s !== "object" ||
      s.v !== 1 ||
      typeof s.origin !== "string" ||
      (s.status !== "parsed" && s.status !== "allow-all" && s.status !== "unavailable") ||
      typeof s.fetchedAtMs !== "number" ||
      typeof s.expiresAtMs !== "number" ||
      (s.text !== undefined && typeof s.text !== "string") ||
      (s.reason !== undefined && typeof s.reason !== "string")
    ) {
      invalidArgument("not a robots snapshot");
    }
    return new RobotsRules(s as RobotsSnapshot, matching);
  }

  /**
   * True when `url` may be fetched. Unavailable rules allow nothing; a URL of another origin is not
   * governed by these rules and gets `false` (ask the rules of its own origin). Its percent escapes
   * are compared in the form the rules' paths have them (see normalizeRobotsText): an agent's URLs
   * have it already, so `/foo/bar/%62%61%7A` is `/foo/bar/baz` to both.
   */
  isAllowed(url: string): boolean {
    if (this.status === "allow-all") return true;
    if (this.#robot === undefined) return false;
    return this.#robot.isAllowed(normalizePercentEscapes(url), this.#userAgent) === true;
  }

  /** The serializable snapshot. */
  toJSON(): RobotsSnapshot {
    const snapshot: RobotsSnapshot = {
      v: 1,
      origin: this.origin,
      status: this.status,
      fetchedAtMs: this.fetchedAtMs,
      expiresAtMs: this.expiresAtMs,
    };
    if (this.retryAtMs !== undefined) snapshot.retryAtMs = this.retryAtMs;
    if (this.error !== undefined) snapshot.error = this.error;
    if (this.reason !== undefined) snapshot.reason = this.reason;
    if (this.httpStatus !== undefined) snapshot.httpStatus = this.httpStatus;
    if (this.#text !== undefined) snapshot.text = this.#text;
    return snapshot;
  }
}

/** A Crawl-delay in seconds as whole ms; `undefined` for none (or one that is no finite number). */
function delayMs(seconds: number | undefined): number | undefined {
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return Math.round(seconds * 1000);
}
