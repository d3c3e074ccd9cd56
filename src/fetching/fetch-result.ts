/** Per-call options of {@link Fetcher.fetch}. */
export interface FetchOptions {
  /** Aborts the fetch; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The `Accept` header. @default "text/html,application/xhtml+xml,application/xml;q=0.9,*\/*;q=0.8" */
  accept?: string;
  /**
   * A lower body cap for this fetch only (e.g. robots.txt, of which only a prefix is read), bytes; the
   * fetcher's `maxBodyBytes` still bounds it. Past it the body is always truncated, whatever
   * `bodyOverflow` says: the caller asked for a prefix. @default the fetcher's `maxBodyBytes`
   */
  maxBodyBytes?: number;
  /**
   * Further request headers, sent after the fetcher's own in this order (e.g. a recrawl's
   * `If-None-Match` / `If-Modified-Since`); a value with CR, LF or NUL is refused.
   */
  headers?: readonly (readonly [name: string, value: string])[];
  /**
   * The address to send the request to: the one the caller counted it at (its per-IP limits). A
   * connection kept alive to another address is closed first. @default the resolver's answer now
   */
  ip?: string;
  /**
   * Called once as the request is about to be written to the server (its headers go out: a new
   * connection's set-up, undici's queue and the event loop come before), not when it never is. The
   * per-IP spacing counts a request's start from then. Answering false stops it unwritten: the fetch
   * rejects with `StartLapsed` (its address's slot lapsed on its way).
   */
  onSent?: () => boolean;
}

/** One HTTP exchange as the archive and the parser need it. */
export interface FetchResult {
  /** The URL fetched (as given; redirects are not followed). */
  url: string;
  /** The remote IP address the request went to (the one asked for, see {@link FetchOptions.ip}). */
  ip: string;
  /** HTTP status code. */
  status: number;
  /** HTTP reason phrase as sent by the server. */
  statusText: string;
  /** The protocol the answer came over: `2` when the server chose HTTP/2 (`--http2`), else `1.1`. */
  httpVersion: "1.1" | "2";
  /** The request line's target as sent: the URL's path and query (`/a/b?c`). */
  requestTarget: string;
  /** Request header fields in the order sent, `host` included. */
  requestHeaders: [string, string][];
  /** Response header fields in order, with the server's raw names. */
  responseHeaders: [string, string][];
  /** Lowercased media type without parameters; `""` when there is no `Content-Type`. */
  contentType: string;
  /** Lowercased `charset` parameter of `Content-Type`, when present. */
  charset?: string;
  /** The body as on the wire after de-chunking, still content-encoded: what a WARC response record stores. */
  rawBody: Buffer;
  /** The decoded body (gzip/deflate/br undone); the same Buffer as `rawBody` for identity. */
  body: Buffer;
  /** Body bytes received from the wire (after de-chunking), including any beyond the cap. */
  wireBytes: number;
  /** True when `rawBody` or `body` was cut at `maxBodyBytes` (only with `bodyOverflow: "truncate"`). */
  truncated: boolean;
  /** Wall-clock time the fetch started, ms since the epoch. */
  startedAtMs: number;
  /** Time from start to the full body (decoded), ms. */
  durationMs: number;
}

/** The first value of response header `name` (any case) of `result`, or undefined. */
export function responseHeader(
  result: Pick<FetchResult, "responseHeaders">,
  name: string,
): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of result.responseHeaders) if (key.toLowerCase() === lower) return value;
  return undefined;
}
