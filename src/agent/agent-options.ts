import type { DedupMode } from "../dedup/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import {
  type BandwidthControl,
  DEFAULT_BANDWIDTH_SEARCH_DEPTH,
  DEFAULT_MIN_BYTES_PER_SECOND,
  DEFAULT_RATE_WINDOW_MS,
} from "../fetching/index.js";
import { type RecrawlOptions, validateRecrawlOptions } from "../recrawl/index.js";
import { type WarcCompression, ZSTD_NODE_VERSION, zstdAvailable } from "../storage/index.js";
import type { CrawlDelayPolicy } from "./crawl-delay-bound.js";
import type { LinkMode } from "./link-router.js";
import type { SitemapMode } from "./sitemap-reader.js";

/** Everything an agent is started with; the CLI flags map one to one onto these. */
export interface AgentOptions {
  /** Unique id of this agent (seeds its replicas on the circle). */
  readonly id: string;
  /** Folder of the durable state, WARC files and crawl log. */
  readonly dataDir: string;
  /** Folder of the WARC files and their indexes, when not `<dataDir>/warc` (another volume, say). */
  readonly warcDir?: string;
  /** Shell command run per finished WARC file and its index (`--on-warc-closed`: see `warc-offload.ts`). */
  readonly onWarcClosed?: string;
  /** Seed URLs (already read from files). */
  readonly seeds: readonly string[];
  /**
   * URLs every agent of the cluster knows (Cho and Garcia-Molina's replication of the most linked
   * URLs): a link or seed naming one that another agent owns is not sent, its owner has it. Each
   * agent must be given them as seeds too, so that owners queue their own. Canonical.
   */
  readonly replicatedUrls?: readonly string[];
  /** Resolve names only through this hosts file (no DNS at all). */
  readonly hostsFile?: string;
  /** CIDRs allowed although private, loopback or link-local. */
  readonly allowNet: readonly string[];
  /** Minimum delay between two requests to one host. @default 1000 */
  readonly delayMs: number;
  /**
   * Wait this many times the last fetch's duration before the host's next request, when that is
   * longer than the delay (Heritrix's delay factor: a slow server gets a slower crawler); 0 for none.
   * @default 0
   */
  readonly delayFactor: number;
  /**
   * The longest robots.txt Crawl-delay honoured as asked, seconds; a longer one gets
   * {@link crawlDelayPolicy}. @default 300 (Heritrix's bound)
   */
  readonly maxCrawlDelaySeconds: number;
  /**
   * A host asking for a Crawl-delay over {@link maxCrawlDelaySeconds}: crawled at that bound (`cap`)
   * or its pages dropped as `crawl-delay-too-long` (`skip`). @default "cap"
   */
  readonly crawlDelayPolicy: CrawlDelayPolicy;
  /** Hosts visited at once. @default 256 */
  readonly maxActiveHosts: number;
  /** Requests in flight to one IP address at most. @default 2 */
  readonly maxPerIp: number;
  /**
   * The least time between the starts of two requests to one IP address, ms (across the cluster under
   * `--ip-limit cluster`). @default {@link delayMs}, through {@link ipDelayOf}
   */
  readonly ipDelayMs?: number;
  /** Fetches per host at most. @default 50000 */
  readonly maxPagesPerHost: number;
  /** Per-host link depth at most. @default 20 */
  readonly maxDepth: number;
  /** User-Agent header; the name of its first product is matched in robots.txt (see {@link productToken}). */
  readonly userAgent: string;
  /** Domains to stay in; empty means a broad crawl. */
  readonly scopes: readonly string[];
  /** Stop when the crawl is complete (alone: the frontier is empty and nothing is in flight). */
  readonly exitWhenDone: boolean;
  /** Attempts to fetch an unavailable robots.txt before a host is given up. @default 3 */
  readonly maxRobotsAttempts: number;
  /** Wait before asking again for an unavailable robots.txt. @default 60000 */
  readonly robotsRetryMs: number;
  /**
   * Attempts at a URL whose fetch failed for a reason that may pass (the server refused or dropped the
   * connection, or did not answer in time) before it counts as failed. @default 3
   */
  readonly maxFetchAttempts: number;
  /** Wait before the first retry of such a fetch; each further retry waits twice as long. @default 2000 */
  readonly fetchRetryMs: number;
  /** Body size cap per fetch. @default 10 MiB */
  readonly maxBodyBytes: number;
  /** Whole-fetch deadline. @default 60000 */
  readonly fetchTimeoutMs: number;
  /** A body slower than this many bytes a second over a whole `minRateWindowMs` is aborted (0: never). */
  readonly minBytesPerSecond: number;
  /** The window of `minBytesPerSecond`, ms. */
  readonly minRateWindowMs: number;
  /**
   * The CA certificates `https:` targets are verified against, replacing Node's default trust (see
   * fetching/trust-store.ts: it already holds Node's, the system's and --ca-file's). Undefined: Node's.
   */
  readonly trustedCaPems?: readonly string[];
  /** Offer HTTP/2 to `https:` servers (they choose); off until measured (bench/http2.mjs). */
  readonly http2: boolean;
  /** Sitemaps read: robots.txt's or else `/sitemap.xml` (`all`), robots.txt's only (`listed`), none. */
  readonly sitemaps: SitemapMode;
  /** Duplicate payloads written as WARC revisits: detected across the cluster, here only, or not. */
  readonly dedup: DedupMode;
  /**
   * Links found to other agents' hosts: sent to their owners (`exchange`), dropped (`firewall`), or
   * crawled here once this agent's own hosts are done (`cross`) — Cho and Garcia-Molina's modes.
   */
  readonly linkMode: LinkMode;
  /** How WARC records are compressed: gzip (`.warc.gz`) or Zstandard (`.warc.zst`, Node.js 22.19+ or 24.6+). */
  readonly warcCompression: WarcCompression;
  /**
   * Diligenti et al.'s bound on the bandwidth of page downloads together (bytes per second), held by
   * a {@link BandwidthGate}; unbounded when undefined.
   */
  readonly maxBytesPerSecond?: number;
  /** Waiting fetches the bound's control looks at for one that fits the free bandwidth. */
  readonly bandwidthSearchDepth: number;
  /** How the bound is held: forecasts (`predictive`), or the naive `stop-and-go`, for experiments. */
  readonly bandwidthControl: BandwidthControl;
  /** Progress output: a live line on a terminal, log lines otherwise, or nothing. */
  readonly progress: "auto" | "line" | "log" | "off";
  /** Continuous crawling (`--recrawl*`): pages fetched again when due. Absent or `off`: each URL once. */
  readonly recrawl?: RecrawlOptions;
  /**
   * Time between two finished WARC files read back against their indexes while the agent runs (see
   * `warc-scrub.ts`), ms; 0 for none. @default 60000
   */
  readonly scrubIntervalMs?: number;
}

/** The least gap between two request starts at one IP address: `--ip-delay-ms`, or else the host delay. */
export function ipDelayOf(options: Pick<AgentOptions, "delayMs" | "ipDelayMs">): number {
  return options.ipDelayMs ?? options.delayMs;
}

/** Defaults of the optional parts of {@link AgentOptions}. */
export const AGENT_DEFAULTS = {
  delayMs: 1000,
  delayFactor: 0,
  maxCrawlDelaySeconds: 300,
  crawlDelayPolicy: "cap",
  maxActiveHosts: 256,
  maxPerIp: 2,
  maxPagesPerHost: 50_000,
  maxDepth: 20,
  userAgent: "ubicrawl/0.1 (+https://github.com/ubicrawl/ubicrawl)",
  maxRobotsAttempts: 3,
  robotsRetryMs: 60_000,
  maxFetchAttempts: 3,
  fetchRetryMs: 2_000,
  maxBodyBytes: 10 * 1024 * 1024,
  fetchTimeoutMs: 60_000,
  minBytesPerSecond: DEFAULT_MIN_BYTES_PER_SECOND,
  minRateWindowMs: DEFAULT_RATE_WINDOW_MS,
  sitemaps: "all",
  dedup: "cluster",
  linkMode: "exchange",
  warcCompression: "gzip",
  http2: false,
  bandwidthSearchDepth: DEFAULT_BANDWIDTH_SEARCH_DEPTH,
  bandwidthControl: "predictive",
  recrawlMode: "off",
  recrawlInterval: "1d",
  recrawlMin: "1h",
  recrawlMax: "30d",
  recrawlBudget: 1,
  scrubIntervalMs: 60_000,
} as const;

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** Checks the options that no other part checks; throws `InvalidArgument` naming the option. */
export function validateAgentOptions(options: AgentOptions): void {
  if (!ID_PATTERN.test(options.id)) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `agent id "${options.id}" must be 1–128 characters of letters, digits, '.', '_' or '-'`,
    );
  }
  if (options.dataDir.length === 0)
    throw new UbiError(ErrorCode.InvalidArgument, "a data folder is required");
  if (options.warcCompression === "zstd" && !zstdAvailable()) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `--warc-compression zstd needs Node.js ${ZSTD_NODE_VERSION} or later (this is ${process.version}): use gzip, or a newer Node`,
    );
  }
  if (options.recrawl !== undefined) {
    validateRecrawlOptions(options.recrawl);
    if (
      options.recrawl.mode !== "off" &&
      options.exitWhenDone &&
      options.recrawl.horizonMs === undefined &&
      options.recrawl.untilMs === undefined
    ) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        "--exit-when-done with --recrawl needs --recrawl-horizon or --recrawl-until: a continuous crawl is never done, only over its horizon",
      );
    }
  }
}

/** RFC 9309 §2.2.1: a crawler's product token has letters, `_` and `-` only. */
const PRODUCT_TOKEN = /^[A-Za-z_-]+$/;

/**
 * The product token a User-Agent string names, lowercased, for robots.txt and meta robots: the name of
 * its first product, before the `/` of its version or its first comment (`ubicrawl/0.1 (+…)` →
 * `ubicrawl`). Undefined when that name is not a product token (`Foo Bar`, `bot2/1.0`): such a
 * crawler is named by no group, and obeys only the groups for every crawler (`*`), as Google's does.
 */
export function productToken(userAgent: string): string | undefined {
  const name = userAgent.split(/[/(]/, 1)[0]?.trim() ?? "";
  return PRODUCT_TOKEN.test(name) ? name.toLowerCase() : undefined;
}
