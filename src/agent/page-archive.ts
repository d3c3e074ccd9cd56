import type { Duplicate, DuplicateDetector } from "../dedup/index.js";
import type { FetchResult } from "../fetching/index.js";
import type { PageChange, StoredCapture } from "../recrawl/index.js";
import {
  type CrawlLog,
  type CrawlLogInput,
  type PayloadOriginal,
  sha1Digest,
  type WarcWriter,
} from "../storage/index.js";

/** How a fetched page was archived (see {@link PageArchive.store}). */
export interface ArchivedPage {
  /** The response that stored the same payload first, when this one was written as a revisit of it. */
  readonly revisitOf?: PayloadOriginal;
  /** With the URL's last capture given (a recrawl), what this fetch found. */
  readonly change?: PageChange;
  /** The stored response holding the page's payload now, when it has a whole one (see {@link isDeduplicable}). */
  readonly capture?: StoredCapture;
  /**
   * To call once the page's records are synced (its commit): tells the payload digest's owner that the
   * response is stored, so later copies become revisits of it. Nothing to tell for a revisit.
   */
  settle(): Promise<void>;
  /**
   * To call instead when the page is not done after all (its processing or its commit failed: it will
   * be fetched again): the claim on its payload is given back, so another copy stores its own response
   * at once instead of waiting for the claim's lease. Nothing to give back for a revisit.
   */
  abandon(): Promise<void>;
}

const NOTHING_TO_SETTLE = async () => {};

/** An archived page that holds no claim on its payload: nothing to settle or give back. */
const NOTHING_TO_TELL = { settle: NOTHING_TO_SETTLE, abandon: NOTHING_TO_SETTLE } as const;

/**
 * Where fetched pages go: each response with its request as WARC records — as a `revisit` record when
 * the same payload was stored before (anywhere in the cluster, see `src/dedup/`) — and each fetch as
 * one line of the crawl log.
 */
export class PageArchive {
  private readonly observers = new Set<(entry: CrawlLogInput) => void>();

  /**
   * `duplicates` absent: every response is stored whole (`--dedup off`). `digestAll`: every whole
   * payload's digest is computed, for the {@link ArchivedPage.capture} a recrawl compares with.
   */
  constructor(
    private readonly warc: WarcWriter,
    private readonly crawlLog: CrawlLog,
    private readonly duplicates?: DuplicateDetector,
    private readonly digestAll = false,
  ) {}

  /**
   * Archives `result`: the request and response records, or the request and a revisit record when a
   * successful, whole payload was stored before. Resolves once the records reach the file.
   *
   * `last`, the URL's last capture (a recrawl), makes a `304 Not Modified` a revisit of it with the
   * server-not-modified profile, and a 200 with the same payload digest an identical-payload revisit
   * of it, without asking the duplicate detector (`digestAll` must be set).
   */
  async store(result: FetchResult, signal?: AbortSignal, last?: StoredCapture): Promise<ArchivedPage> {
    const exchange = {
      url: result.url,
      ip: result.ip,
      date: new Date(result.startedAtMs),
      requestHeaderBlock: requestHeaderBlock(result),
      responseHeaderBlock: responseHeaderBlock(result),
    };
    if (last !== undefined && result.status === 304) {
      await this.warc.writeRevisit({
        ...exchange,
        payloadDigest: last.digest,
        refersTo: last.original,
        notModified: true,
      });
      return { change: "not-modified", capture: last, ...NOTHING_TO_TELL };
    }
    const whole = isDeduplicable(result);
    const checked = this.duplicates !== undefined && whole;
    const payloadDigest = checked || (whole && this.digestAll) ? sha1Digest([result.rawBody]) : "";
    if (last !== undefined && payloadDigest === last.digest) {
      await this.warc.writeRevisit({ ...exchange, payloadDigest, refersTo: last.original });
      return { change: "unchanged", capture: last, ...NOTHING_TO_TELL };
    }
    const change: { change?: PageChange } = last === undefined ? {} : { change: "changed" };
    const verdict: Duplicate | undefined =
      checked && this.duplicates ? await this.duplicates.check(payloadDigest, signal) : undefined;
    if (verdict?.kind === "seen") {
      await this.warc.writeRevisit({ ...exchange, payloadDigest, refersTo: verdict.original });
      return {
        ...change,
        revisitOf: verdict.original,
        capture: { digest: payloadDigest, original: verdict.original },
        ...NOTHING_TO_TELL,
      };
    }
    let recordId: string;
    try {
      // A digest computed here is written as is: the WARC worker digests the block only.
      const digested = payloadDigest === "" ? {} : { payloadDigest };
      recordId = await this.warc.write({
        ...exchange,
        body: result.rawBody,
        truncated: result.truncated,
        ...digested,
      });
    } catch (error) {
      if (verdict !== undefined) void this.duplicates?.settle(verdict.owner, payloadDigest, undefined);
      throw error;
    }
    const original = { url: result.url, date: exchange.date.toISOString(), recordId };
    const capture = payloadDigest === "" ? {} : { capture: { digest: payloadDigest, original } };
    if (verdict === undefined) return { ...change, ...capture, ...NOTHING_TO_TELL };
    return {
      ...change,
      ...capture,
      settle: () => this.duplicates?.settle(verdict.owner, payloadDigest, original) ?? NOTHING_TO_SETTLE(),
      abandon: () => this.duplicates?.settle(verdict.owner, payloadDigest, undefined) ?? NOTHING_TO_SETTLE(),
    };
  }

  /** Appends one line to the crawl log, and shows it to the observers. */
  log(entry: CrawlLogInput): void {
    this.crawlLog.append(entry);
    for (const observer of this.observers) observer(entry);
  }

  /**
   * Calls `observer` with every crawl-log line from now on (fetches, failed attempts, failures), for
   * metrics and the console; returns the function that stops it.
   */
  observe(observer: (entry: CrawlLogInput) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /**
   * The WARC files' folder, their index lines as records are written (`WarcWriter.observeIndexed`) and
   * the live file's whole length: what the console replays and an operator downloads.
   */
  get captures(): Pick<WarcWriter, "folder" | "observeIndexed" | "liveExtent"> {
    return this.warc;
  }
}

/**
 * Whether a response's payload is looked up as a possible duplicate: a whole (not truncated), non-empty
 * 2xx body. Error pages, often alike across a site, are always stored as they came.
 */
export function isDeduplicable(result: FetchResult): boolean {
  return result.status >= 200 && result.status < 300 && !result.truncated && result.rawBody.byteLength > 0;
}

/** The HTTP request as sent, for the WARC request record. */
export function requestHeaderBlock(result: FetchResult): string {
  let block = `GET ${result.requestTarget} HTTP/1.1\r\n`;
  for (const [name, value] of result.requestHeaders) block += `${name}: ${value}\r\n`;
  return `${block}\r\n`;
}

/**
 * The response status line and headers, for the WARC response record. The body is stored de-chunked,
 * so `Transfer-Encoding` is renamed (as other archivers do) to keep readers from de-chunking it again.
 */
export function responseHeaderBlock(result: FetchResult): string {
  let block = `HTTP/1.1 ${result.status} ${result.statusText}\r\n`;
  for (const [name, value] of result.responseHeaders) {
    const stored = name.toLowerCase() === "transfer-encoding" ? `X-Ubicrawl-Original-${name}` : name;
    block += `${stored}: ${value}\r\n`;
  }
  return `${block}\r\n`;
}
