import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import type { Clock, TimerHandle } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { toFetchError } from "./fetch-errors.js";

// How far a request got, which decides what a failure or the deadline is called.
const QUEUED = 0;
const SENT = 1;
const HEADERS = 2;

/**
 * The undici dispatch handler of one fetch: collects status, raw headers and body chunks up to the cap,
 * and enforces the whole-fetch deadline and the caller's abort signal. One object per fetch, no closures
 * but the deadline callback; it also serves as the signal's event listener (`handleEvent`).
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

  constructor(
    readonly url: string,
    private readonly maxBodyBytes: number,
    private readonly overflowIsError: boolean,
    private readonly clock: Clock,
    totalTimeoutMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.promise = new Promise<FetchHandler>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#timer = clock.setTimeout(this.#onDeadline, totalTimeoutMs);
    signal?.addEventListener("abort", this, { once: true });
  }

  /** The caller's signal fired. */
  handleEvent(): void {
    this.#fail(this.signal?.reason, false, true);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#settled) {
      // The deadline or the caller gave up while the request waited for its connection.
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
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.wireBytes += chunk.length;
    if (this.#settled) return;
    const room = this.maxBodyBytes - this.size;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    if (this.overflowIsError) {
      this.#fail(
        new UbiError(ErrorCode.BodyTooLarge, `${this.url}: body exceeds ${this.maxBodyBytes} bytes`),
        true,
        true,
      );
      return;
    }
    // Keep the prefix for the archive and stop reading: the connection is dropped, not drained.
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.size += room;
    this.truncated = true;
    this.#succeed();
    controller.abort(new UbiError(ErrorCode.BodyTooLarge, "body cap reached (truncated)"));
  }

  onResponseEnd(): void {
    this.#succeed();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // undici has already failed the request; nothing to abort.
    this.#fail(error, true, false);
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
    this.signal?.removeEventListener("abort", this);
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}
