import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { finished } from "node:stream/promises";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";

/**
 * A file of the export's work folder written as a stream: each write waits while the stream's buffer
 * is full, so memory stays bounded, and any failure rejects with `StorageFailed` naming the file.
 */
export class WorkFile {
  private readonly stream: WriteStream;

  constructor(readonly path: string) {
    // Failures are read from `errored` and the promises below; never an unhandled 'error' event.
    this.stream = createWriteStream(path).on("error", () => {});
  }

  /** Appends `data`; resolves once the stream takes more. */
  async write(data: string | Buffer): Promise<void> {
    if (this.stream.errored) throw this.failure(this.stream.errored);
    if (!this.stream.write(data)) {
      await once(this.stream, "drain").catch((error: unknown) => Promise.reject(this.failure(error)));
    }
  }

  /** Ends the file; resolves once all of it is written and it is closed. */
  async close(): Promise<void> {
    this.stream.end();
    await finished(this.stream).catch((error: unknown) => Promise.reject(this.failure(error)));
  }

  /** Stops writing after a failure elsewhere. */
  abandon(): void {
    this.stream.destroy();
  }

  private failure(error: unknown): UbiError {
    return new UbiError(ErrorCode.StorageFailed, `cannot write ${this.path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
