import type { FetchResult } from "../fetching/index.js";
import type { CrawlLog, CrawlLogInput, WarcWriter } from "../storage/index.js";

/**
 * Where fetched pages go: each response with its request as WARC records, each fetch as one line of
 * the crawl log.
 */
export class PageArchive {
  private readonly observers = new Set<(entry: CrawlLogInput) => void>();

  constructor(
    private readonly warc: WarcWriter,
    private readonly crawlLog: CrawlLog,
  ) {}

  /** Writes the request and response records of `result`; resolves once they reach the file. */
  async writeResponse(result: FetchResult): Promise<void> {
    await this.warc.write({
      url: result.url,
      ip: result.ip,
      date: new Date(result.startedAtMs),
      requestHeaderBlock: requestHeaderBlock(result),
      responseHeaderBlock: responseHeaderBlock(result),
      body: result.rawBody,
      truncated: result.truncated,
    });
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
}

/** The HTTP request as sent, for the WARC request record. */
export function requestHeaderBlock(result: FetchResult): string {
  const url = new URL(result.url);
  let block = `GET ${url.pathname}${url.search} HTTP/1.1\r\n`;
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
