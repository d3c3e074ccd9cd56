import { invalidArgument } from "../errors.js";
import { CHANGE_PROCESSES, type PageChanges } from "./changes.js";

/** Options of the synthetic web. Every field is optional; the same options always give the same web. */
export interface TestWebOptions {
  /**
   * Seed of every random choice (host sizes, links, text).
   * @default 1
   */
  seed?: number;
  /**
   * Number of existing hosts, not counting the trap host.
   * @default 200
   */
  hosts?: number;
  /**
   * Target total number of URLs a correct crawler fetches (about; host sizes are heavy-tailed).
   * @default 20000
   */
  pages?: number;
  /**
   * Port every host listens on; 0 picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * Add the infinite-calendar trap host `calendar.ubi.test`.
   * @default true
   */
  trap?: boolean;
  /**
   * Number of seed home pages in {@link RunningTestWeb.seeds} (any one of them reaches the whole web).
   * @default 3
   */
  seedCount?: number;
  /**
   * Largest number of articles on one host; keeps normal hosts under a crawler's per-host page cap.
   * With {@link biggestHostPercent}, the cap of every host but the biggest.
   * @default 1500
   */
  maxArticlesPerHost?: number;
  /**
   * The biggest host's share of all articles, in percent: the host with the largest heavy-tailed draw
   * gets this share exactly (whatever {@link maxArticlesPerHost}), the others share the rest as before,
   * none larger than it. With 800 hosts the draws alone give the biggest host a few percent at most
   * under the default cap; a real web's biggest sites hold far more.
   * @default undefined (the biggest host is sized like the others)
   */
  biggestHostPercent?: number;
  /**
   * Names linked from pages but absent from the hosts file (`gone0000.ubi.test`…): dead hosts.
   * @default 2% of `hosts`, at least 1
   */
  goneHosts?: number;
  /**
   * Mean number of content links per article (navigation links come on top).
   * @default 20
   */
  linksPerPage?: number;
  /**
   * About this percentage of an article's links (navigation included) go to other hosts; home pages
   * always link 3 others and their two neighbours in the ring of hosts (which keeps every host
   * reachable from any seed). Fewer makes hosts' clusters sparser, as the laboratory's modes experiment
   * varies it.
   * @default 20
   */
  crossLinkPercent?: number;
  /**
   * Mirror hosts (`mirror0.ubi.test`…): each serves, byte for byte, every response of one small
   * normal host (whose home page links to it), so a crawler meets the same payloads under other URLs.
   * @default 2
   */
  mirrors?: number;
  /**
   * Delay before every response, to simulate slow servers.
   * @default 0
   */
  responseDelayMs?: number;
  /**
   * Per-host rate limits: each host sends its bodies at its own rate, drawn from its salt between `min`
   * and `max` bytes per second (evenly on a log scale), in twentieths of a second. Unlimited when
   * undefined.
   */
  hostBytesPerSecond?: { readonly min: number; readonly max: number };
  /**
   * Scheme of every host: `https` serves TLS with the certificate given to `startTestWeb` (see
   * testweb/certificates.ts), and every absolute link and redirect says `https:`.
   * @default "http"
   */
  scheme?: TestWebScheme;
  /**
   * With `https`: offer HTTP/2 as well as HTTP/1.1 (TLS ALPN; the client chooses).
   * @default false
   */
  http2?: boolean;
  /**
   * Append one line per served request to this file (`timeMs status ip url`), for other processes.
   * @default undefined (no log)
   */
  servedLogPath?: string;
  /**
   * Pages that change over time: about `percent` of the HTML pages get a new version (their body ends
   * differently) every `everyMs`, the others never; every 200 then carries a strong `ETag` and a
   * `Last-Modified`, and a conditional GET that matches is answered `304 Not Modified` (see changes.ts).
   * @default undefined (every page is the same for ever, with no validators)
   */
  changes?: PageChanges;
  /**
   * Groups of hosts sharing one address each (shared hosting): the first group's hosts are the first
   * normal hosts (`h0000`…), the next group's follow. Hosts in no group are spread as before.
   * @default [] (about {@link sharedAddressPercent} of hosts share an address with the host before them)
   */
  ipGroups?: readonly IpGroup[];
  /**
   * Virtual hosting outside {@link ipGroups}: about this share of the hosts, in percent, reuse the address
   * of the host before them (at least one pair on a web of 4 hosts or more, unless 0: every host then
   * has an address of its own). The same seed gives the same web whatever this is, but for the sharing.
   * @default DEFAULT_SHARED_ADDRESS_PERCENT
   */
  sharedAddressPercent?: number;
}

/** Hosts sharing one address (see {@link TestWebOptions.ipGroups}). */
export interface IpGroup {
  /** How many hosts, at least 2. */
  readonly hosts: number;
  /**
   * The address answers 429 Too Many Requests (`Retry-After: 1`) to a request beyond this many started
   * there within the last second. @default undefined (no limit)
   */
  readonly requestsPerSecond?: number;
  /**
   * The group's first host with no special robots.txt role asks for this `Crawl-delay` (seconds) in a
   * robots.txt of rules. @default undefined (as any host)
   */
  readonly crawlDelaySeconds?: number;
}

/** The schemes the test web serves. */
export const TEST_WEB_SCHEMES = ["http", "https"] as const;
/** One of {@link TEST_WEB_SCHEMES}. */
export type TestWebScheme = (typeof TEST_WEB_SCHEMES)[number];

/** {@link TestWebOptions} with defaults applied and values checked. */
export interface ResolvedTestWebOptions {
  readonly seed: number;
  readonly hosts: number;
  readonly pages: number;
  readonly port: number;
  readonly trap: boolean;
  readonly seedCount: number;
  readonly maxArticlesPerHost: number;
  readonly biggestHostPercent: number | undefined;
  readonly goneHosts: number;
  readonly linksPerPage: number;
  readonly crossLinkPercent: number;
  readonly mirrors: number;
  readonly responseDelayMs: number;
  readonly hostBytesPerSecond: { readonly min: number; readonly max: number } | undefined;
  readonly scheme: TestWebScheme;
  readonly http2: boolean;
  readonly servedLogPath: string | undefined;
  readonly changes: PageChanges | undefined;
  readonly ipGroups: readonly IpGroup[];
  readonly sharedAddressPercent: number;
}

/** Default of {@link TestWebOptions.sharedAddressPercent}. */
export const DEFAULT_SHARED_ADDRESS_PERCENT = 5;

/** Default of {@link TestWebOptions.maxArticlesPerHost}. */
export const DEFAULT_MAX_ARTICLES_PER_HOST = 1500;

/** Smallest number of articles on a host: enough for sections, redirects and dirt to exist. */
export const MIN_ARTICLES_PER_HOST = 5;

function integerIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    invalidArgument(`testweb: ${name} must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

/** Applies defaults and validates; throws `UBI_ERR_INVALID_ARGUMENT` on a bad value. */
export function resolveTestWebOptions(options: TestWebOptions = {}): ResolvedTestWebOptions {
  const seed = integerIn("seed", options.seed ?? 1, 0, 0xffffffff);
  const hosts = integerIn("hosts", options.hosts ?? 200, 3, 60_000);
  const maxArticlesPerHost = integerIn(
    "maxArticlesPerHost",
    options.maxArticlesPerHost ?? DEFAULT_MAX_ARTICLES_PER_HOST,
    MIN_ARTICLES_PER_HOST,
    1_000_000,
  );
  const pages = integerIn("pages", options.pages ?? 20_000, hosts * MIN_ARTICLES_PER_HOST * 2, 100_000_000);
  const seedCount = integerIn("seedCount", options.seedCount ?? 3, 1, hosts - 2);
  // Mirrored hosts are ordinary ones: neither seeds nor the two robots specials.
  const ordinaryHosts = hosts - 2 - seedCount;
  if (pages > hosts * maxArticlesPerHost) {
    invalidArgument(`testweb: pages (${pages}) exceeds hosts × maxArticlesPerHost`);
  }
  return {
    seed,
    hosts,
    pages,
    port: integerIn("port", options.port ?? 0, 0, 65_535),
    trap: options.trap ?? true,
    seedCount,
    maxArticlesPerHost,
    biggestHostPercent:
      options.biggestHostPercent === undefined
        ? undefined
        : integerIn("biggestHostPercent", options.biggestHostPercent, 1, 90),
    goneHosts: integerIn("goneHosts", options.goneHosts ?? Math.max(1, Math.round(hosts * 0.02)), 1, 10_000),
    linksPerPage: integerIn("linksPerPage", options.linksPerPage ?? 20, 4, 200),
    crossLinkPercent: integerIn("crossLinkPercent", options.crossLinkPercent ?? 20, 0, 50),
    mirrors: integerIn("mirrors", options.mirrors ?? Math.min(2, ordinaryHosts), 0, ordinaryHosts),
    responseDelayMs: integerIn("responseDelayMs", options.responseDelayMs ?? 0, 0, 60_000),
    hostBytesPerSecond: rateRange(options.hostBytesPerSecond),
    scheme: schemeOf(options.scheme ?? "http"),
    http2: http2Of(options.http2 ?? false, options.scheme ?? "http"),
    servedLogPath: options.servedLogPath,
    changes:
      options.changes === undefined
        ? undefined
        : {
            everyMs: integerIn("changes.everyMs", options.changes.everyMs, 100, 365 * 86_400_000),
            percent: integerIn("changes.percent", options.changes.percent, 0, 100),
            ...changeProcessOf(options.changes),
          },
    ipGroups: ipGroupsOf(options.ipGroups ?? [], hosts),
    sharedAddressPercent: integerIn(
      "sharedAddressPercent",
      options.sharedAddressPercent ?? DEFAULT_SHARED_ADDRESS_PERCENT,
      0,
      100,
    ),
  };
}

function ipGroupsOf(groups: readonly IpGroup[], hosts: number): readonly IpGroup[] {
  let total = 0;
  const resolved = groups.map((group, i) => {
    total += integerIn(`ipGroups[${i}].hosts`, group.hosts, 2, hosts);
    const { crawlDelaySeconds } = group;
    if (
      crawlDelaySeconds !== undefined &&
      !(Number.isFinite(crawlDelaySeconds) && crawlDelaySeconds > 0 && crawlDelaySeconds <= 3600)
    )
      invalidArgument(
        `testweb: ipGroups[${i}].crawlDelaySeconds must be in (0, 3600], got ${crawlDelaySeconds}`,
      );
    return {
      hosts: group.hosts,
      ...(group.requestsPerSecond === undefined
        ? {}
        : {
            requestsPerSecond: integerIn(
              `ipGroups[${i}].requestsPerSecond`,
              group.requestsPerSecond,
              1,
              1_000_000,
            ),
          }),
      ...(crawlDelaySeconds === undefined ? {} : { crawlDelaySeconds }),
    };
  });
  if (total > hosts) invalidArgument(`testweb: ipGroups hold ${total} hosts, the web has ${hosts}`);
  return resolved;
}

function rateRange(
  range: TestWebOptions["hostBytesPerSecond"],
): ResolvedTestWebOptions["hostBytesPerSecond"] {
  if (range === undefined) return undefined;
  const min = integerIn("hostBytesPerSecond.min", range.min, 1, 1 << 30);
  const max = integerIn("hostBytesPerSecond.max", range.max, min, 1 << 30);
  return { min, max };
}

function http2Of(http2: boolean, scheme: string): boolean {
  if (http2 && scheme !== "https") invalidArgument("testweb: http2 needs the https scheme");
  return http2;
}

function schemeOf(value: string): TestWebScheme {
  if (!(TEST_WEB_SCHEMES as readonly string[]).includes(value)) {
    invalidArgument(`testweb: scheme must be http or https, got ${value}`);
  }
  return value as TestWebScheme;
}

/** The process and spread of `changes`, checked (see {@link PageChanges.process}). */
function changeProcessOf(changes: PageChanges): Pick<PageChanges, "process" | "spread"> {
  const { process, spread } = changes;
  if (process !== undefined && !(CHANGE_PROCESSES as readonly string[]).includes(process)) {
    invalidArgument(
      `testweb: changes.process must be one of ${CHANGE_PROCESSES.join(", ")}, got ${String(process)}`,
    );
  }
  if (spread !== undefined && !(Number.isFinite(spread) && spread >= 1 && spread <= 1000)) {
    invalidArgument(`testweb: changes.spread must be a number from 1 to 1000, got ${spread}`);
  }
  return { ...(process === undefined ? {} : { process }), ...(spread === undefined ? {} : { spread }) };
}
