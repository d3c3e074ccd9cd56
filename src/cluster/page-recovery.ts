import type { Ownership } from "./ownership.js";

/** Options of {@link PageRecovery}. */
export interface PageRecoveryOptions {
  /** Previous owners asked per page (UbiCrawler's k). @default 2 */
  readonly k?: number;
  /** URLs asked in one query at most. @default 256 */
  readonly batchSize?: number;
}

/** What {@link PageRecovery} needs. */
export interface PageRecoveryDeps {
  readonly ownership: Ownership;
  readonly isAlive: (id: string) => boolean;
  /** Asks `peerId` which of `urls` it fetched; one flag per URL. */
  readonly ask: (peerId: string, urls: readonly string[]) => Promise<boolean[]>;
}

/** @default of {@link PageRecoveryOptions.k}. */
export const DEFAULT_RECOVERY_K = 2;

/**
 * UbiCrawler's page recovery: before fetching a page of a host it did not own before, an agent asks
 * the host's previous owners whether they fetched it, and skips it if one did. Questions go in batches
 * (the page and the ones queued behind it), so the cost is far below one message per page.
 */
export class PageRecovery {
  private readonly k: number;
  private readonly batchSize: number;
  /** Answers already received, per host, for URLs still queued. */
  private readonly answers = new Map<string, Map<string, boolean>>();

  constructor(
    options: PageRecoveryOptions,
    private readonly deps: PageRecoveryDeps,
  ) {
    this.k = options.k ?? DEFAULT_RECOVERY_K;
    this.batchSize = options.batchSize ?? 256;
  }

  /** Forgets cached answers (a view change may change who to ask). */
  reset(): void {
    this.answers.clear();
  }

  /**
   * True when a previous owner of `host` says it fetched `url`. `upcoming` gives URLs queued behind
   * it, asked about in the same batch. Unreachable owners count as "not fetched": better a refetch
   * than a hole in the crawl.
   */
  async fetchedElsewhere(host: string, url: string, upcoming: () => readonly string[]): Promise<boolean> {
    if (this.k === 0) return false;
    const cached = this.answers.get(host);
    const known = cached?.get(url);
    if (known !== undefined) {
      cached?.delete(url);
      if (cached?.size === 0) this.answers.delete(host);
      return known;
    }
    const owners = this.deps.ownership.previousOwners(host, this.k, this.deps.isAlive);
    if (owners.length === 0) return false;
    const urls = [url, ...upcoming().filter((next) => next !== url)].slice(0, this.batchSize);
    const fetched = new Array<boolean>(urls.length).fill(false);
    for (const owner of owners) {
      const unknown = urls.filter((_, index) => !fetched[index]);
      if (unknown.length === 0) break;
      let reply: boolean[];
      try {
        reply = await this.deps.ask(owner, unknown);
      } catch {
        continue;
      }
      let j = 0;
      for (let i = 0; i < urls.length; i++) if (!fetched[i]) fetched[i] = reply[j++] === true;
    }
    const answers = new Map<string, boolean>();
    for (let i = 1; i < urls.length; i++) answers.set(urls[i] as string, fetched[i] as boolean);
    if (answers.size > 0) this.answers.set(host, answers);
    else this.answers.delete(host);
    return fetched[0] as boolean;
  }
}
