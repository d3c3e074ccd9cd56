/** Share of the pages fetched when the tail of {@link crawlTail} begins (0.9). */
export const TAIL_FROM_SHARE: number;

/** The end of a crawl: from the moment 90 % of its pages had been fetched to its last page. */
export interface CrawlTail {
  /** Seconds from the crawl's start to the page that makes 90 %. */
  readonly fromSeconds: number;
  /** Seconds from that page to the last page. */
  readonly seconds: number;
  /** `seconds` / the crawl's wall time. */
  readonly shareOfCrawl: number;
}

/** A host's requests after the last request to any other host. */
export interface HostAlone {
  /** Its requests in that window. */
  readonly requests: number;
  /** From the last request to another host to its own last one (0 when it was not last). */
  readonly seconds: number;
  /** Gaps between successive requests in the window (requests − 1, or 0). */
  readonly gaps: number;
  /** Median gap, ms, start to start (NaN without gaps). */
  readonly medianGapMs: number;
  /** 90th percentile gap by nearest rank, ms (NaN without gaps). */
  readonly p90GapMs: number;
}

/** The crawl's tail from its pages' times (ascending epoch ms) and its start and end (epoch ms). */
export function crawlTail(
  pageTimesMs: readonly number[],
  startedAtMs: number,
  endedAtMs: number,
  share?: number,
): CrawlTail;
/** `host`'s requests once no other host had any more (times ascending, by host). */
export function hostAlone(timesByHost: ReadonlyMap<string, readonly number[]>, host: string): HostAlone;
/** The host with the most URLs of a ground truth, its URL count and share. */
export function biggestHost(urls: Iterable<string>): { host: string; urls: number; share: number };
/** The `fraction` percentile by nearest rank; NaN when empty. */
export function nearestRank(values: readonly number[], fraction: number): number;
