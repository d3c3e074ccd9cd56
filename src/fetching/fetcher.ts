import { STATUS_CODES } from "node:http";
import { createSecureContext } from "node:tls";
import { Agent } from "undici";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, invalidArgument, UbiError } from "../errors.js";
import { parseContentType } from "./content-type.js";
import { decodeBody } from "./decode.js";
import { FetchHandler } from "./fetch-handler.js";
import type { FetchOptions, FetchResult } from "./fetch-result.js";
import { guardedConnector, OriginConnections } from "./guarded-connector.js";
import type { NetPolicy } from "./net-policy.js";
import type { Resolver } from "./resolver.js";

/** Options of {@link Fetcher}. */
export interface FetcherOptions {
  /** The `User-Agent` header. @default "ubicrawl/0.1 (+https://github.com/ubicrawl/ubicrawl)" */
  userAgent?: string;
  /** TCP (and TLS) connect deadline, ms. @default 10000 */
  connectTimeoutMs?: number;
  /** Deadline for the response headers once the request is sent, ms. @default 15000 */
  headersTimeoutMs?: number;
  /** Longest silence allowed between body chunks, ms. @default 15000 */
  bodyIdleTimeoutMs?: number;
  /** Deadline for the whole fetch, from the call to the last body byte, ms. @default 60000 */
  totalTimeoutMs?: number;
  /**
   * Slow senders: a body that brings fewer than this many bytes a second over a whole
   * `rateWindowMs` (from the response headers on) fails with `TooSlow`, so a server dripping a byte a
   * second holds a worker for one window, not the whole-fetch deadline. 0 turns the check off.
   * @default 1000
   */
  minBytesPerSecond?: number;
  /** The window over which `minBytesPerSecond` is measured, ms. @default 10000 */
  rateWindowMs?: number;
  /**
   * The CA certificates (PEM) `https:` targets are verified against, instead of Node's default trust.
   * Verification is never turned off. @default Node's default trust
   */
  trustedCaPems?: readonly string[];
  /** Cap on the body, applied to the wire bytes and again to the decoded bytes. @default 10485760 (10 MiB) */
  maxBodyBytes?: number;
  /**
   * What happens past `maxBodyBytes`: `"truncate"` keeps the first `maxBodyBytes` and sets
   * `truncated: true` (what an archive wants: the record is stored as truncated); `"error"` rejects
   * with `BodyTooLarge`. @default "truncate"
   */
  bodyOverflow?: "truncate" | "error";
  /** The `Accept-Encoding` header; only gzip, deflate and br can be decoded. @default "gzip, deflate, br" */
  acceptEncoding?: string;
  /**
   * Offer HTTP/2 to `https:` servers (TLS ALPN); the server chooses. Plain `http:` stays HTTP/1.1.
   * @default false
   */
  http2?: boolean;
}

/** Dependencies of {@link Fetcher}. */
export interface FetcherDeps {
  /** Resolves host names, for requests not given the address they go to. */
  resolver: Resolver;
  /** Refuses forbidden addresses at connect time. */
  netPolicy: NetPolicy;
  /** Time source for the whole-fetch deadline and timings. @default systemClock */
  clock?: Clock;
}

/** @default of {@link FetcherOptions.minBytesPerSecond}. */
export const DEFAULT_MIN_BYTES_PER_SECOND = 1000;
/** @default of {@link FetcherOptions.rateWindowMs}. */
export const DEFAULT_RATE_WINDOW_MS = 10_000;

const DEFAULT_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/**
 * Fetches one URL at a time per origin over undici: a single keep-alive connection per origin, DNS and
 * network policy enforced on every connection, timeouts, a body cap and content decoding. Redirects are
 * returned, not followed. Each request goes to one address — the one it names (`FetchOptions.ip`, where
 * the caller counted it), else the resolver's answer now — and never over a connection kept alive to
 * another (see {@link OriginConnections}).
 */
export class Fetcher {
  readonly #agent: Agent;
  readonly #clock: Clock;
  readonly #userAgent: string;
  readonly #acceptEncoding: string;
  readonly #totalTimeoutMs: number;
  readonly #maxBodyBytes: number;
  readonly #overflowIsError: boolean;
  readonly #minBytesPerSecond: number;
  readonly #rateWindowMs: number;
  readonly #resolver: Resolver;
  readonly #connections = new OriginConnections();

  /** @throws UbiError InvalidArgument for an invalid option. */
  constructor(options: FetcherOptions, deps: FetcherDeps) {
    const connectTimeoutMs = positiveMs("connectTimeoutMs", options.connectTimeoutMs ?? 10_000);
    const headersTimeoutMs = positiveMs("headersTimeoutMs", options.headersTimeoutMs ?? 15_000);
    const bodyIdleTimeoutMs = positiveMs("bodyIdleTimeoutMs", options.bodyIdleTimeoutMs ?? 15_000);
    this.#totalTimeoutMs = positiveMs("totalTimeoutMs", options.totalTimeoutMs ?? 60_000);
    this.#maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
    if (!(Number.isSafeInteger(this.#maxBodyBytes) && this.#maxBodyBytes > 0)) {
      invalidArgument(`maxBodyBytes must be a positive integer, got ${options.maxBodyBytes}`);
    }
    const overflow = options.bodyOverflow ?? "truncate";
    if (overflow !== "truncate" && overflow !== "error") {
      invalidArgument(`bodyOverflow must be "truncate" or "error", got ${String(overflow)}`);
    }
    this.#overflowIsError = overflow === "error";
    this.#minBytesPerSecond = options.minBytesPerSecond ?? DEFAULT_MIN_BYTES_PER_SECOND;
    if (!(Number.isFinite(this.#minBytesPerSecond) && this.#minBytesPerSecond >= 0)) {
      invalidArgument(`minBytesPerSecond must be a number >= 0, got ${options.minBytesPerSecond}`);
    }
    this.#rateWindowMs = positiveMs("rateWindowMs", options.rateWindowMs ?? DEFAULT_RATE_WINDOW_MS);
    this.#userAgent = headerValue(
      "userAgent",
      options.userAgent ?? "ubicrawl/0.1 (+https://github.com/ubicrawl/ubicrawl)",
    );
    this.#acceptEncoding = headerValue("acceptEncoding", options.acceptEncoding ?? "gzip, deflate, br");
    if (deps?.resolver === undefined || deps.netPolicy === undefined) {
      invalidArgument("Fetcher needs a resolver and a netPolicy");
    }
    this.#clock = deps.clock ?? systemClock;
    this.#resolver = deps.resolver;

    const connections = this.#connections;
    // One TLS context for every connection: parsing hundreds of CA certificates per handshake is not free.
    const secureContext =
      options.trustedCaPems === undefined
        ? undefined
        : createSecureContext({ ca: [...options.trustedCaPems] });
    this.#agent = new Agent({
      allowH2: options.http2 === true,
      connections: 1, // politeness is per host anyway; one socket per origin, reused
      pipelining: 1,
      connectTimeout: connectTimeoutMs,
      headersTimeout: headersTimeoutMs,
      bodyTimeout: bodyIdleTimeoutMs,
      connect: guardedConnector(
        deps.resolver,
        deps.netPolicy,
        { timeout: connectTimeoutMs, secureContext, allowH2: options.http2 === true },
        connections,
      ),
    });
    const forget = (origin: URL) => {
      connections.disconnected(origin.origin);
    };
    this.#agent.on("disconnect", forget);
    this.#agent.on("connectionError", forget);
  }

  /**
   * GETs `url`. Resolves for every HTTP status (3xx included, with its `Location`); rejects with a
   * {@link UbiError} whose code says what failed, or with `signal.reason` when aborted.
   */
  async fetch(url: string, options?: FetchOptions): Promise<FetchResult> {
    const startedAtMs = this.#clock.now();
    let target: URL;
    try {
      target = new URL(url);
    } catch (cause) {
      throw new UbiError(ErrorCode.InvalidUrl, `not a URL: ${url}`, { cause });
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      throw new UbiError(ErrorCode.InvalidUrl, `not http(s): ${url}`);
    }
    const signal = options?.signal;
    signal?.throwIfAborted();
    const accept = options?.accept ?? DEFAULT_ACCEPT;
    const extra = options?.headers ?? [];
    for (const [name, value] of extra) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) invalidArgument(`not a header name: ${name}`);
      headerValue(`header ${name}`, value);
    }
    const origin = target.origin;
    const callCap = options?.maxBodyBytes;
    if (callCap !== undefined && !(Number.isSafeInteger(callCap) && callCap > 0)) {
      invalidArgument(`maxBodyBytes must be a positive integer, got ${callCap}`);
    }
    // A per-call cap below the fetcher's asks for a prefix: it truncates, never fails.
    const prefixOnly = callCap !== undefined && callCap < this.#maxBodyBytes;
    const maxBodyBytes = prefixOnly ? callCap : this.#maxBodyBytes;
    const overflowIsError = this.#overflowIsError && !prefixOnly;
    const ip = options?.ip ?? (await this.#resolver.resolve(target.hostname, signal));
    const ended = await this.#connections.begin(origin, ip);

    const handler = new FetchHandler(
      url,
      {
        maxBodyBytes,
        overflowIsError,
        totalTimeoutMs: this.#totalTimeoutMs,
        minBytesPerSecond: this.#minBytesPerSecond,
        rateWindowMs: this.#rateWindowMs,
      },
      this.#clock,
      signal,
      options?.onSent,
    );
    const path = target.pathname + target.search;
    let h2: boolean;
    try {
      this.#agent.dispatch(
        {
          origin,
          path,
          method: "GET",
          headers: [
            "host",
            target.host,
            "user-agent",
            this.#userAgent,
            "accept",
            accept,
            "accept-encoding",
            this.#acceptEncoding,
            ...extra.flat(),
          ],
        },
        handler,
      );
      await handler.promise;
      h2 = this.#connections.connectionOf(origin)?.protocol === "h2";
    } finally {
      ended();
    }

    const rawBody = handler.body();
    let body = rawBody;
    let truncated = handler.truncated;
    const encoding = handler.contentEncoding;
    if (encoding !== undefined && encoding !== "" && rawBody.length > 0) {
      const decoded = await decodeBody(rawBody, encoding, maxBodyBytes);
      if (decoded.truncated && overflowIsError) {
        throw new UbiError(ErrorCode.BodyTooLarge, `${url}: decoded body exceeds ${maxBodyBytes} bytes`);
      }
      body = decoded.body;
      truncated ||= decoded.truncated;
    }
    const type = parseContentType(handler.contentType);
    const result: FetchResult = {
      url,
      ip,
      status: handler.status,
      // HTTP/2 has no reason phrase: the standard one stands in, for the archived status line.
      statusText: handler.statusText || (h2 ? (STATUS_CODES[handler.status] ?? "") : ""),
      httpVersion: h2 ? "2" : "1.1",
      requestTarget: path,
      // What undici writes: host first (HTTP/2's :authority), then its connection header (none in
      // HTTP/2), then ours in order.
      requestHeaders: [
        ["host", target.host],
        ...(h2 ? [] : [["connection", "keep-alive"] as [string, string]]),
        ["user-agent", this.#userAgent],
        ["accept", accept],
        ["accept-encoding", this.#acceptEncoding],
        ...extra.map(([name, value]) => [name, value] as [string, string]),
      ],
      responseHeaders: headerPairs(handler.rawHeaders),
      contentType: type.mediaType,
      rawBody,
      body,
      wireBytes: handler.wireBytes,
      truncated,
      startedAtMs,
      durationMs: this.#clock.now() - startedAtMs,
    };
    if (type.charset !== undefined) result.charset = type.charset;
    return result;
  }

  /** Closes all connections after in-flight fetches finish. Idempotent. */
  async close(): Promise<void> {
    if (!this.#agent.closed) await this.#agent.close();
  }
}

function headerPairs(raw: Buffer[] | string[] | null): [string, string][] {
  const pairs: [string, string][] = [];
  if (raw === null) return pairs;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    // Header bytes are latin1 on the wire; this keeps them byte-exact for the WARC record.
    pairs.push([raw[i].toString("latin1"), raw[i + 1].toString("latin1")]);
  }
  return pairs;
}

function positiveMs(name: string, value: number): number {
  if (!(Number.isFinite(value) && value > 0))
    invalidArgument(`${name} must be a positive number of ms, got ${value}`);
  return value;
}

function headerValue(name: string, value: string): string {
  if (typeof value !== "string" || value === "" || /[\r\n\0]/.test(value)) {
    invalidArgument(`${name} must be a non-empty header value without CR, LF or NUL`);
  }
  return value;
}
