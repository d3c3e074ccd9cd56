/** Share of the pages in the start and in the tail of {@link crawlPhases}. */
export const EDGE_SHARE: number;

/** One phase of a crawl. */
export interface CrawlPhase {
  /** Pages fetched in the phase. */
  readonly pages: number;
  /** Its wall time. */
  readonly seconds: number;
  /** The process's CPU (all threads) in the phase. */
  readonly cpuSeconds: number;
  /** pages / seconds (NaN for an empty span). */
  readonly pagesPerSecond: number;
  /** cpuSeconds per page, in ms (NaN without pages). */
  readonly cpuMsPerPage: number;
}

/** A crawl split into start, steady middle and tail; the phases' CPU adds up to the process's. */
export interface CrawlPhases {
  /** Share of the pages in the start, and in the tail. */
  readonly edge: number;
  /** Spawn to the first page of the middle. */
  readonly start: CrawlPhase;
  /** The middle pages. */
  readonly steady: CrawlPhase;
  /** The last page of the middle to the exit. */
  readonly tail: CrawlPhase;
}

/** CPU seconds at `atMs`, linearly between the samples around it. */
export function cpuAt(series: readonly (readonly [number, number])[], atMs: number): number;

/** Splits one crawl into start, steady middle and tail by its pages' times and its CPU samples. */
export function crawlPhases(crawl: {
  readonly series: readonly (readonly [number, number])[];
  readonly pageTimesMs: readonly number[];
  readonly startedAtMs: number;
  readonly exitedAtMs: number;
  readonly cpuSeconds: number;
  readonly edge?: number;
}): CrawlPhases;
