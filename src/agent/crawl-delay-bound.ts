import type { Logger } from "../logging/index.js";
import type { RobotsRules } from "../robots/index.js";

/**
 * What a host whose robots.txt asks for a Crawl-delay over the operator's bound gets: crawled at the
 * bound (`cap`, as Heritrix does up to its 300 s) or not at all, its pages dropped (`skip`, as Nutch
 * and StormCrawler do past their 30 s).
 */
export const CRAWL_DELAY_POLICIES = ["cap", "skip"] as const;

/** One of {@link CRAWL_DELAY_POLICIES}. */
export type CrawlDelayPolicy = (typeof CRAWL_DELAY_POLICIES)[number];

/** The operator's bound on robots.txt Crawl-delays. */
export interface CrawlDelayBoundOptions {
  /** The longest Crawl-delay honoured as asked, ms (a longer one is capped here, or skips the host). */
  readonly maxCrawlDelayMs: number;
  /** What a host asking for longer gets. */
  readonly policy: CrawlDelayPolicy;
}

/**
 * Holds robots.txt Crawl-delays to `--max-crawl-delay`: under `cap` the rules already pace a host at
 * most that much apart (the robots cache clamps to it), under `skip` a host asking for longer has its
 * pages dropped. Either way the operator is told once per host and run, with what the host asked for.
 */
export class CrawlDelayBound {
  /** Hosts the operator was told about in this run. */
  private readonly told = new Set<string>();

  constructor(
    private readonly options: CrawlDelayBoundOptions,
    private readonly deps: { readonly logger: Logger },
  ) {}

  /** True when `host`'s pages are to be dropped for the Crawl-delay its `rules` ask for. */
  skips(host: string, rules: RobotsRules): boolean {
    const asked = rules.askedCrawlDelayMs;
    const { maxCrawlDelayMs, policy } = this.options;
    if (asked === undefined || asked <= maxCrawlDelayMs) return false;
    if (!this.told.has(host)) {
      this.told.add(host);
      const fields = { host, crawlDelayMs: asked, maxCrawlDelayMs, policy };
      const over = `${host}: robots.txt asks for Crawl-delay ${asked / 1000} s, over --max-crawl-delay ${maxCrawlDelayMs / 1000} s`;
      if (policy === "skip") {
        this.deps.logger.warn(
          { event: "crawl-delay-too-long", ...fields },
          `${over}: its pages are skipped (crawl-delay-too-long; --crawl-delay-policy skip)`,
        );
      } else {
        this.deps.logger.info(
          { event: "crawl-delay-capped", ...fields },
          `${over}: crawled a request every ${maxCrawlDelayMs / 1000} s (--crawl-delay-policy cap)`,
        );
      }
    }
    return policy === "skip";
  }
}
