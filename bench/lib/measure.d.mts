/** What {@link measureChildren} measured of a crawler's processes. */
export interface MeasuredRun {
  readonly exitCode: number | string;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly peakRssMib: number;
}

/** A started crawler process as the comparison benches handle it. */
export interface CrawlerChild {
  readonly name: string;
  readonly pid: number;
  readonly startedAtMs: number;
  readonly exited: Promise<number | string>;
  stop(): unknown;
  readonly stderrLines: string[];
}

/** Waits for `started` to exit: wall time from the first start, their exact CPU, the largest peak RSS. */
export function measureChildren(
  name: string,
  started: readonly CrawlerChild[],
  context: {
    readonly children: Set<unknown>;
    readonly sampler: { watch(pid: number): void; peakOf(pid: number): number };
    readonly timeoutS: number;
    readonly log: (text: string) => void;
    readonly okExitCodes?: readonly (number | string)[];
  },
): Promise<MeasuredRun>;

/** Figures of a run from the URLs it fetched (repeats included), against `truth`. */
export function fetchFigures<R extends { wallSeconds: number; cpuSeconds: number }>(
  run: R,
  fetchedUrls: readonly string[],
  truth: ReadonlySet<string>,
  normalize: (url: string) => string | null | undefined,
): R & {
  pages: number;
  pagesPerSecond: number;
  cpuSecondsPer1000Pages: number;
  cpuCores: number;
  distinctUrls: number;
  coverage: number;
  extraUrls: number;
};

/** URLs of a crawl log that a server answered (status > 0), in log order. */
export function crawlLogFetchedUrls(path: string): string[];

/** Starts another crawler process (`command args`), stopped by its own PID. */
export function spawnCrawler(command: string, args: readonly string[]): CrawlerChild;
