import { createReadStream, ftruncateSync, writeSync } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";

/**
 * The crawl log: one JSON line per fetch, appended to `<dir>/crawl.log`. Lines are buffered and written
 * in batches (every `flushEveryLines` lines or `flushIntervalMs`, or at `flush`), never with a write per
 * line, each batch with one small synchronous write.
 */

/** What the caller logs about one fetch; `ts` defaults to the clock's now. Extra fields are kept. */
export interface CrawlLogInput {
  /** ISO 8601 time of the fetch. */
  ts?: string;
  /** The fetched URL. */
  url: string;
  /** HTTP status, or 0 when the fetch failed. */
  status: number;
  /** Body bytes received. */
  bytes: number;
  /** Response Content-Type ("" when none). */
  contentType: string;
  /** Links found in the page. */
  links: number;
  /** Time from request to end of body. */
  durationMs: number;
  /** Error code (an `ErrorCode`) when the fetch failed. */
  error?: string;
  /** Link depth from the seeds. */
  depth: number;
  /** The agent that fetched it. */
  agent?: string;
  /** Further fields, logged as given. */
  [field: string]: unknown;
}

/** One line of the crawl log. */
export interface CrawlLogEntry extends CrawlLogInput {
  ts: string;
}

/** Options of a {@link CrawlLog}. */
export interface CrawlLogOptions {
  /** Folder of the log (created if missing). */
  dir: string;
  /**
   * File name inside `dir`.
   * @default "crawl.log"
   */
  fileName?: string;
  /**
   * Write as soon as this many lines are buffered.
   * @default 1000
   */
  flushEveryLines?: number;
  /**
   * Write buffered lines at most this long after the first of them.
   * @default 200
   */
  flushIntervalMs?: number;
}

/** Dependencies of a {@link CrawlLog}. */
export interface CrawlLogDeps {
  /** Flush timer and default `ts`. @default systemClock */
  clock?: Clock;
}

const TAIL_CHUNK_BYTES = 64 * 1024;

/** Appends buffered JSON lines to the crawl log; on open, cuts a line torn by a crash. */
export class CrawlLog {
  /** Full path of the log file. */
  readonly path: string;
  private readonly dir: string;
  private readonly flushEveryLines: number;
  private readonly flushIntervalMs: number;
  private readonly clock: Clock;

  private handle: FileHandle | undefined;
  private state: "new" | "open" | "closed" = "new";
  private buffer: string[] = [];
  private timer: ReturnType<Clock["setTimeout"]> | undefined;
  private failure: UbiError | undefined;
  /** A failed sync, for good (see {@link sync}). */
  private lostWrites: UbiError | undefined;
  /** Length of the file's whole lines: a failed append is cut back to it before the lines are retried. */
  private goodBytes = 0;
  private closing: Promise<void> | undefined;
  private linesWritten = 0;

  constructor(options: CrawlLogOptions, deps: CrawlLogDeps = {}) {
    if (typeof options.dir !== "string" || options.dir === "") invalid("dir must be a non-empty path");
    const fileName = options.fileName ?? "crawl.log";
    if (fileName === "" || /[/\\]/.test(fileName)) invalid("fileName must be a plain file name");
    const flushEveryLines = options.flushEveryLines ?? 1000;
    if (!Number.isInteger(flushEveryLines) || flushEveryLines < 1)
      invalid("flushEveryLines must be a positive integer");
    const flushIntervalMs = options.flushIntervalMs ?? 200;
    if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 0) invalid("flushIntervalMs must be >= 0");
    this.dir = options.dir;
    this.path = join(options.dir, fileName);
    this.flushEveryLines = flushEveryLines;
    this.flushIntervalMs = flushIntervalMs;
    this.clock = deps.clock ?? systemClock;
  }

  /** Creates the folder, cuts a torn last line left by a crash, and opens the file for appending. */
  async open(): Promise<void> {
    if (this.state !== "new") throw new UbiError(ErrorCode.StorageFailed, "CrawlLog.open called twice");
    try {
      await mkdir(this.dir, { recursive: true });
      await cutTornLine(this.path);
      this.handle = await open(this.path, "a");
      this.goodBytes = (await this.handle.stat()).size;
    } catch (error) {
      this.state = "closed";
      throw new UbiError(ErrorCode.StorageFailed, `cannot open crawl log ${this.path}`, { cause: error });
    }
    this.state = "open";
  }

  /** Buffers one line; the write happens later (see {@link CrawlLogOptions}). */
  append(entry: CrawlLogInput): void {
    if (this.state !== "open") throw new UbiError(ErrorCode.StorageFailed, "CrawlLog is not open");
    let line: string;
    try {
      line = JSON.stringify({ ts: entry.ts ?? new Date(this.clock.now()).toISOString(), ...entry });
    } catch (error) {
      throw new UbiError(ErrorCode.InvalidArgument, "crawl log entry is not JSON-serializable", {
        cause: error,
      });
    }
    this.buffer.push(line);
    if (this.buffer.length >= this.flushEveryLines) {
      this.startWrite();
    } else if (this.timer === undefined) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        this.startWrite();
      }, this.flushIntervalMs);
    }
  }

  /** Writes the buffered lines now; after a failed write, tries them again (rejecting while it fails). */
  async flush(): Promise<void> {
    this.failure = undefined;
    this.startWrite();
    if (this.failure) throw this.failure;
  }

  /**
   * Writes the buffered lines and syncs the file: resolves once every line so far is on the disk. A
   * failed sync fails every later one too: the kernel may have dropped lines it had accepted, and says
   * so only once.
   */
  async sync(): Promise<void> {
    if (this.lostWrites) throw this.lostWrites;
    await this.flush();
    try {
      await this.handle?.datasync();
    } catch (error) {
      this.lostWrites = new UbiError(
        ErrorCode.StorageFailed,
        `cannot sync crawl log ${this.path}: the disk may have dropped lines it had accepted; restart the agent`,
        { cause: error },
      );
      throw this.lostWrites;
    }
  }

  /** Flushes, syncs and closes the file; idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    if (this.state !== "open") {
      this.state = "closed";
      this.closing = Promise.resolve();
      return this.closing;
    }
    this.closing = (async () => {
      try {
        await this.sync();
      } finally {
        this.state = "closed";
        await this.handle?.close();
        this.handle = undefined;
      }
    })();
    return this.closing;
  }

  /** Lines written to the file since open. */
  get lines(): number {
    return this.linesWritten;
  }

  /**
   * Bytes of whole lines in the file (buffered lines not counted): every line appended from now on
   * starts at this offset or later.
   */
  get writtenBytes(): number {
    return this.goodBytes;
  }

  /**
   * Writes the buffer with one synchronous `write(2)` (the file is in append mode). A few hundred bytes
   * into the page cache cost ~3 µs of CPU this way, against ~20 µs for an async write, most of it waking
   * a thread-pool thread and then the event loop again; and the commit that waits for this line (see
   * the agent's group commit) no longer waits for that round trip.
   */
  private startWrite(): void {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    // After a failure the lines wait for `flush` to try again.
    if (this.buffer.length === 0 || !this.handle || this.failure) return;
    const fd = this.handle.fd;
    const text = `${this.buffer.join("\n")}\n`;
    try {
      const bytes = Buffer.byteLength(text);
      const written = writeSync(fd, text);
      if (written !== bytes) throw new Error(`short write: ${written} of ${bytes} bytes`);
      this.goodBytes += bytes;
      this.linesWritten += this.buffer.length;
      this.buffer = [];
    } catch (error) {
      // Keep the lines for the next try, and cut off whatever part of them reached the file.
      try {
        ftruncateSync(fd, this.goodBytes);
      } catch {
        // Reported below as the write's failure either way.
      }
      this.failure = new UbiError(ErrorCode.StorageFailed, `cannot write crawl log ${this.path}`, {
        cause: error,
      });
    }
  }
}

/**
 * Yields the entries of a crawl log file in order (skipping nothing: a bad line throws), from byte
 * `fromByte` (the start of a line) on.
 */
export async function* readCrawlLog(path: string, fromByte = 0): AsyncGenerator<CrawlLogEntry> {
  const input = createReadStream(path, { start: fromByte });
  try {
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line !== "") yield JSON.parse(line) as CrawlLogEntry;
    }
  } finally {
    input.destroy();
  }
}

/** Truncates `path` after its last newline (a missing file is left missing). */
async function cutTornLine(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r+");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    const size = (await handle.stat()).size;
    let end = size;
    const chunk = Buffer.alloc(TAIL_CHUNK_BYTES);
    // Scan back from the end for the last "\n"; a crash tears at most the last line.
    while (end > 0) {
      const start = Math.max(0, end - TAIL_CHUNK_BYTES);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline >= 0) {
        end = start + newline + 1;
        break;
      }
      end = start;
    }
    if (end < size) {
      await handle.truncate(end);
      await handle.sync();
    }
  } finally {
    await handle.close();
  }
}

function invalid(message: string): never {
  throw new UbiError(ErrorCode.InvalidArgument, message);
}
