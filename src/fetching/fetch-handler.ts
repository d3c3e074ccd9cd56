import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import { watchAbort } from "../abort-watch.js";
import type { Clock, TimerHandle } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { DecodedSizeWatch } from "./decode.js";
import { toFetchError } from "./fetch-errors.js";

/** The bounds one fetch is held to. */
export interface FetchLimits {
  /** Body bytes kept; past it the body is truncated or the fetch fails (`overflowIsError`). */
  readonly maxBodyBytes: number;
  readonly overflowIsError: boolean;
  /** Deadline of the whole fetch, ms. */
  readonly totalTimeoutMs: number;
  /** Body bytes a second, at least, over each `rateWindowMs` from the headers on (0: no minimum). */
  readonly minBytesPerSecond: number;
  readonly rateWindowMs: number;
}

/**
 * A compressed body is watched for its decoded size once this many wire bytes came: smaller ones are
 * decoded only once, whole, and cannot hold more than the cap times the best ratio of their coding.
 */
const WATCH_DECODED_AFTER_BYTES = 64 * 1024;

// How far a request got, which decides what a failure or the deadline is called.
const QUEUED = 0;
const SENT = 1;
const HEADERS = 2;

/**
 * The undici dispatch handler of one fetch: collects status, raw headers and body chunks up to the cap
 * (a compressed body's decoded size included), and enforces the whole-fetch deadline, the minimum
 * transfer rate and the caller's abort signal. One object per fetch, no closures but the timer
 * callbacks and the signal's watch.
 */
export class FetchHandler implements Dispatcher.DispatchHandler {
  status = 0;
  statusText = "";
  rawHeaders: Buffer[] | string[] | null = null;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  readonly chunks: Buffer[] = [];
  size = 0;
  wireBytes = 0;
  truncated = false;
  readonly promise: Promise<FetchHandler>;

  #resolve!: (handler: FetchHandler) => void;
  #reject!: (error: unknown) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #phase = QUEUED;
  #settled = false;
  #abortReason: unknown;
  #timer: TimerHandle | undefined;
  #rateTimer: TimerHandle | undefined;
  /** Wire bytes when the current rate window began. */
  #windowStartBytes = 0;
  #decodedWatch: DecodedSizeWatch | undefined;
  /** Stops watching the caller's signal. */
  #unwatch: (() => void) | undefined;

  constructor(
    readonly url: string,
    private readonly limits: FetchLimits,
    private readonly clock: Clock,
    signal: AbortSignal | undefined,
    /** Told when the request is written (see `FetchOptions.onSent`). */
    private readonly onSent?: () => boolean,
  ) {
    this.promise = new Promise<FetchHandler>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#timer = clock.setTimeout(this.#onDeadline, limits.totalTimeoutMs);
    this.#unwatch = signal && watchAbort(signal, () => this.#fail(signal.reason, false, true));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#settled) {
      // The deadline or the caller gave up while the request waited for its connection.
      controller.abort(this.#abortReason as Error);
      return;
    }
    if (this.onSent !== undefined && !this.onSent()) {
      this.#fail(
        new UbiError(ErrorCode.StartLapsed, `${this.url}: its address's slot lapsed before it was sent`),
        false,
        false,
      );
      controller.abort(this.#abortReason as Error);
      return;
    }
    this.#controller = controller;
    this.#phase = SENT;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // 1xx informational: the real response follows
    this.#phase = HEADERS;
    this.status = statusCode;
    this.statusText = statusMessage ?? "";
    this.rawHeaders = (controller.rawHeaders as Buffer[] | string[] | null | undefined) ?? null;
    this.contentType = single(headers["content-type"]);
    this.contentEncoding = single(headers["content-encoding"]);
    if (this.limits.minBytesPerSecond > 0 && !this.#settled) {
      this.#rateTimer = this.clock.setTimeout(this.#onRateWindow, this.limits.rateWindowMs);
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.wireBytes += chunk.length;
    if (this.#settled) return;
    const room = this.limits.maxBodyBytes - this.size;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      this.#watchDecodedSize(chunk);
      return;
    }
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.size += room;
    this.#overflow(controller, `body exceeds ${this.limits.maxBodyBytes} bytes`);
  }

  onResponseEnd(): void {
    this.#succeed();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // undici has already failed the request; nothing to abort.
    this.#fail(error, true, false);
  }

  /**
   * Past the cap: fails the fetch (`overflowIsError`), or keeps the prefix for the archive and stops
   * reading — the connection is dropped, not drained.
   */
  #overflow(controller: Dispatcher.DispatchController, what: string): void {
    if (this.limits.overflowIsError) {
      this.#fail(new UbiError(ErrorCode.BodyTooLarge, `${this.url}: ${what}`), true, true);
      return;
    }
    this.truncated = true;
    this.#succeed();
    controller.abort(new UbiError(ErrorCode.BodyTooLarge, "body cap reached (truncated)"));
  }

  #watchDecodedSize(chunk: Buffer): void {
    if (this.#decodedWatch !== undefined) {
      this.#decodedWatch.write(chunk);
      return;
    }
    const encoding = this.contentEncoding;
    if (
      encoding === undefined ||
      this.size < WATCH_DECODED_AFTER_BYTES ||
      this.size - chunk.length >= WATCH_DECODED_AFTER_BYTES
    )
      return;
    this.#decodedWatch = DecodedSizeWatch.start(encoding, this.chunks, this.limits.maxBodyBytes, () => {
      const controller = this.#controller;
      if (!this.#settled && controller !== null)
        this.#overflow(controller, `decoded body exceeds ${this.limits.maxBodyBytes} bytes`);
    });
  }

  /** The concatenated body (no copy when it arrived in one chunk). */
  body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
  }

  readonly #onDeadline = (): void => {
    this.#timer = undefined;
    const code =
      this.#phase === QUEUED
        ? ErrorCode.ConnectTimeout
        : this.#phase === SENT
          ? ErrorCode.HeadersTimeout
          : ErrorCode.BodyTimeout;
    this.#fail(new UbiError(code, `${this.url}: whole-fetch deadline exceeded`), true, true);
  };

  /** A rate window ended: too few bytes came in it, or the next window begins. */
  readonly #onRateWindow = (): void => {
    this.#rateTimer = undefined;
    if (this.#settled) return;
    const { minBytesPerSecond, rateWindowMs } = this.limits;
    const came = this.wireBytes - this.#windowStartBytes;
    if (came < (minBytesPerSecond * rateWindowMs) / 1000) {
      const error = new UbiError(
        ErrorCode.TooSlow,
        `${this.url}: ${came} bytes in ${rateWindowMs} ms, under ${minBytesPerSecond} bytes/s`,
      );
      this.#fail(error, false, true);
      return;
    }
    this.#windowStartBytes = this.wireBytes;
    this.#rateTimer = this.clock.setTimeout(this.#onRateWindow, rateWindowMs);
  };

  #succeed(): void {
    if (this.#settled) return;
    this.#settle();
    this.#resolve(this);
  }

  #fail(error: unknown, wrap: boolean, abort: boolean): void {
    if (this.#settled) return;
    this.#settle();
    const reason = wrap ? toFetchError(error, this.url, this.#phase === HEADERS) : error;
    this.#abortReason = reason;
    if (abort) this.#controller?.abort(reason as Error);
    this.#reject(reason);
  }

  #settle(): void {
    this.#settled = true;
    if (this.#timer !== undefined) this.clock.clearTimeout(this.#timer);
    if (this.#rateTimer !== undefined) this.clock.clearTimeout(this.#rateTimer);
    this.#decodedWatch?.close();
    this.#unwatch?.();
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}
