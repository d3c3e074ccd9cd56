import type { Transform } from "node:stream";
import {
  brotliDecompress,
  constants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
  gunzip,
  inflate,
  inflateRaw,
  type ZlibOptions,
} from "node:zlib";
import { ErrorCode, UbiError } from "../errors.js";

/** A decoded body and whether the decoded-size cap cut it. */
export interface Decoded {
  /** The decoded bytes, at most the cap. */
  body: Buffer;
  /** True when the decoded stream went on past the cap. */
  truncated: boolean;
}

type Coding = "gzip" | "deflate" | "deflate-raw" | "br";

// Flushing instead of finishing decodes as much as there is of a cut or slightly broken stream,
// as browsers do, so a truncated archive record still yields its readable prefix.
const ZLIB_OPTIONS: ZlibOptions = { finishFlush: constants.Z_SYNC_FLUSH };
const BROTLI_FLUSH = constants.BROTLI_OPERATION_FLUSH;

/**
 * Undoes a `Content-Encoding` header (`gzip`, `x-gzip`, `deflate`, `br`; several are undone last first)
 * without ever holding more than `maxBytes` of output, which is what stops a decompression bomb.
 * @throws UbiError DecodeFailed for an unknown coding or a corrupt stream.
 */
export async function decodeBody(raw: Buffer, contentEncoding: string, maxBytes: number): Promise<Decoded> {
  const codings = contentEncoding.toLowerCase().split(",");
  let body = raw;
  let truncated = false;
  for (let i = codings.length - 1; i >= 0; i--) {
    const name = codings[i].trim();
    if (name === "" || name === "identity") continue;
    const coding = codingOf(name, body);
    const step = await decodeOne(body, coding, maxBytes);
    body = step.body;
    truncated ||= step.truncated;
  }
  return { body, truncated };
}

/**
 * Follows a body's decoded size while it arrives, so that reading stops as soon as the decoded bytes
 * reach the cap, not only once the wire cap is reached: a 10 MiB gzip of zeros is a 10 GiB page. The
 * decoded output is only counted (the body is decoded once more, capped, when complete).
 */
export class DecodedSizeWatch {
  readonly #stream: Transform;
  #decoded = 0;
  #closed = false;

  private constructor(
    coding: Coding,
    private readonly maxBytes: number,
    private readonly onCapReached: () => void,
  ) {
    this.#stream = decoderStream(coding);
    this.#stream.on("data", (chunk: Buffer) => {
      this.#decoded += chunk.length;
      if (this.#decoded >= this.maxBytes && !this.#closed) {
        this.close();
        this.onCapReached();
      }
    });
    // A corrupt stream is reported by the final decode, with its cause; here it just ends the watch.
    this.#stream.on("error", () => this.close());
  }

  /**
   * A watch of a body in `contentEncoding` starting with `head`, or undefined when the coding is not a
   * single one this module decodes (several codings, or an unknown one: the final decode decides).
   */
  static start(
    contentEncoding: string,
    head: readonly Buffer[],
    maxBytes: number,
    onCapReached: () => void,
  ): DecodedSizeWatch | undefined {
    const name = contentEncoding.trim().toLowerCase();
    if (name.includes(",") || !KNOWN_CODINGS.has(name)) return undefined;
    const watch = new DecodedSizeWatch(
      codingOf(name, Buffer.concat(head.slice(0, 2))),
      maxBytes,
      onCapReached,
    );
    for (const chunk of head) watch.write(chunk);
    return watch;
  }

  /** Feeds the next wire chunk. */
  write(chunk: Buffer): void {
    if (!this.#closed) this.#stream.write(chunk);
  }

  /** Stops decoding (the body ended, failed or reached the cap). Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stream.destroy();
  }
}

const KNOWN_CODINGS: ReadonlySet<string> = new Set(["gzip", "x-gzip", "deflate", "br"]);

function codingOf(name: string, body: Buffer): Coding {
  switch (name) {
    case "gzip":
    case "x-gzip":
      return "gzip";
    case "br":
      return "br";
    case "deflate":
      // "deflate" should be zlib-wrapped (RFC 9110) but many servers send raw deflate; a zlib header's
      // first two bytes, read as a big-endian number, are a multiple of 31 with method 8.
      return body.length >= 2 && (body[0] & 0x0f) === 8 && ((body[0] << 8) | body[1]) % 31 === 0
        ? "deflate"
        : "deflate-raw";
    default:
      throw new UbiError(ErrorCode.DecodeFailed, `unsupported Content-Encoding "${name}"`);
  }
}

async function decodeOne(input: Buffer, coding: Coding, maxBytes: number): Promise<Decoded> {
  try {
    // One native call is the fast path; only an oversized output falls back to streaming for the prefix.
    return { body: await decodeWhole(input, coding, maxBytes), truncated: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ERR_BUFFER_TOO_LARGE") {
      throw new UbiError(ErrorCode.DecodeFailed, `cannot decode ${coding} body`, { cause: error });
    }
  }
  return decodePrefix(input, coding, maxBytes);
}

function decodeWhole(input: Buffer, coding: Coding, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, result: Buffer) => (error === null ? resolve(result) : reject(error));
    switch (coding) {
      case "gzip":
        gunzip(input, { ...ZLIB_OPTIONS, maxOutputLength: maxBytes }, done);
        break;
      case "deflate":
        inflate(input, { ...ZLIB_OPTIONS, maxOutputLength: maxBytes }, done);
        break;
      case "deflate-raw":
        inflateRaw(input, { ...ZLIB_OPTIONS, maxOutputLength: maxBytes }, done);
        break;
      case "br":
        brotliDecompress(input, { finishFlush: BROTLI_FLUSH, maxOutputLength: maxBytes }, done);
        break;
    }
  });
}

function decoderStream(coding: Coding): Transform {
  switch (coding) {
    case "gzip":
      return createGunzip(ZLIB_OPTIONS);
    case "deflate":
      return createInflate(ZLIB_OPTIONS);
    case "deflate-raw":
      return createInflateRaw(ZLIB_OPTIONS);
    case "br":
      return createBrotliDecompress({ finishFlush: BROTLI_FLUSH });
  }
}

/** Streams the decoder and stops it as soon as `maxBytes` of output exist. */
function decodePrefix(input: Buffer, coding: Coding, maxBytes: number): Promise<Decoded> {
  const stream = decoderStream(coding);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (truncated: boolean) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      resolve({ body: Buffer.concat(chunks, size), truncated });
    };
    stream.on("data", (chunk: Buffer) => {
      if (settled) return;
      const room = maxBytes - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        finish(true);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.on("end", () => finish(false));
    stream.on("error", (error) => {
      if (settled) return;
      settled = true;
      reject(new UbiError(ErrorCode.DecodeFailed, `cannot decode ${coding} body`, { cause: error }));
    });
    stream.end(input);
  });
}
