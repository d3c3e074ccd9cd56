import { ErrorCode } from "../errors.js";
import type { FetchResult } from "../fetching/index.js";
import type { Frontier } from "../frontier/index.js";
import { estimatedRate, type PageHistory, type PageRevisits } from "../recrawl/index.js";
import type { PayloadOriginal, StoredQueueEntry } from "../storage/index.js";
import { pageLogEntry } from "./crawl-log-entries.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { LinkRouter } from "./link-router.js";
import type { ArchivedPage, PageArchive } from "./page-archive.js";
import { followLinks, type PageLinkOptions, sameLinkBase } from "./page-links.js";
import type { SitemapReader } from "./sitemap-reader.js";

/** What a {@link PageFinisher} writes to and reads. */
export interface PageFinisherDeps {
  readonly frontier: Pick<Frontier, "complete" | "isTaken" | "putBack" | "commit" | "wasFetched">;
  readonly archive: Pick<PageArchive, "store" | "log">;
  /** Reads the URLs of a fetched sitemap. */
  readonly sitemaps: Pick<SitemapReader, "read">;
  /** Where a page's links go. */
  readonly router: LinkRouter;
  readonly stats: CrawlStats;
  /** Continuous crawling (`--recrawl`): each page's history kept and its next visit planned. Absent: off. */
  readonly revisits?: Pick<PageRevisits, "visited">;
}

/**
 * What becomes of a page fetched and kept (its answer is the page's, not a push-back): archived, its
 * links followed, counted, logged and its URL completed, durably. The host visitor hands each page
 * over and goes on with the host's next fetch while this runs (see unsynced-pages.ts).
 */
export class PageFinisher {
  constructor(
    private readonly options: PageLinkOptions,
    private readonly deps: PageFinisherDeps,
  ) {}

  /**
   * Archives a fetched page, follows its links, logs it and completes its URL, durably; a failure puts
   * the URL back at the head of its queue (not archived, so not done) and is thrown. With `--recrawl`,
   * the page's history (`previous`, for a revisit) is updated in the same commit. The page's turn ends
   * once it is processed, before its commit.
   */
  async finish(
    host: string,
    entry: StoredQueueEntry,
    result: FetchResult,
    signal: AbortSignal,
    previous: PageHistory | undefined,
    endTurn: () => void,
  ): Promise<void> {
    const { frontier, revisits, stats } = this.deps;
    let archived: ArchivedPage | undefined;
    try {
      archived = await this.deps.archive.store(result, signal, previous?.capture);
      const { revisitOf, change } = archived;
      const links = entry.sitemap
        ? await this.deps.sitemaps.read(host, entry, result)
        : change === "unchanged" ||
            change === "not-modified" ||
            (await this.followedBefore(revisitOf, entry.url))
          ? 0
          : followLinks(result, { url: entry.url, depth: entry.depth, host }, this.options, this.deps);
      stats.recordFetch(result.wireBytes, result.status);
      if (revisitOf !== undefined) stats.recordDuplicate(result.rawBody.byteLength);
      if (result.status >= 400) stats.recordError(`http_${Math.floor(result.status / 100)}xx`);
      // Archived, but only a prefix: an endless, huge or bomb body is a failure worth counting.
      if (result.truncated) stats.recordError(ErrorCode.BodyTooLarge);
      const history = entry.sitemap ? undefined : revisits?.visited(host, entry, result, archived, previous);
      this.deps.archive.log({
        ...pageLogEntry(entry, result, links, revisitOf?.url),
        ...(history === undefined ? {} : recrawlLogFields(history, change)),
      });
      frontier.complete(host, entry, { done: true, counted: !entry.revisit });
    } catch (error) {
      // Whatever failed, the URL is not lost: back to the head of its queue, if still taken.
      if (frontier.isTaken(host, entry)) frontier.putBack(host, entry);
      void archived?.abandon();
      throw error;
    } finally {
      endTurn();
    }
    try {
      await frontier.commit();
    } catch (error) {
      // Not durable (a full disk): fetched again later, so another copy must not wait for this one.
      void archived.abandon();
      throw error;
    }
    // Synced: the payload's owner may now point later copies at this response.
    void archived.settle();
  }

  /**
   * Whether the links of a page at `url` whose payload `original` stored first were followed already:
   * the same bytes under the same base have the same links, and when this agent's durable state has
   * the original as done, its links were queued or handed on in that same batch. Another agent's
   * original (or this URL's own, fetched again after its agent died) may have taken its links down
   * with it: they are followed again (the seen sets drop what is known).
   */
  private async followedBefore(original: PayloadOriginal | undefined, url: string): Promise<boolean> {
    if (original === undefined || original.url === url || !sameLinkBase(original.url, url)) return false;
    return (await this.deps.frontier.wasFetched([original.url]))[0] === true;
  }
}

/** Seconds in a day: a change rate per second, logged per day. */
const DAY_S = 86_400;

/**
 * What a recrawled page's crawl log line adds: its visits so far, what a revisit found (`recrawl`:
 * not-modified, unchanged or changed), its change rate estimated from its own visits as of this one
 * (`changesPerDay`, from its third visit on: {@link estimatedRate}) and when the page is due again
 * (`nextFetch`, absent past the horizon).
 */
function recrawlLogFields(history: PageHistory, change: string | undefined): Record<string, unknown> {
  const rate = estimatedRate(history);
  return {
    visits: history.visits,
    ...(change === undefined ? {} : { recrawl: change }),
    ...(Number.isNaN(rate) ? {} : { changesPerDay: rate * DAY_S }),
    ...(history.nextAtMs === undefined ? {} : { nextFetch: new Date(history.nextAtMs).toISOString() }),
  };
}
