import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import { type GzipMembers, InlineGzip, WorkerGzip } from "./gzip-members.js";
import type { RecordDraft } from "./warc-draft.js";
import { NAME_PART_PATTERN, OPEN_SUFFIX, warcFileName, warcFileSerial } from "./warc-file-name.js";
import { exchangeDrafts, newRecordId, recordDraft } from "./warc-record.js";
import { recoverWarcFile } from "./warc-recovery.js";

/**
 * The WARC 1.1 writer: one gzip member per record, files rotated by size and named
 * `<prefix>-<yyyyMMddHHmmss>-<serial>-<agentId>.warc.gz`, with `.open` appended while being written.
 *
 * Records are built as soon as `write` is called and handed to the compressor (a worker thread by
 * default: see `gzip-members.ts`). Their members then wait in a batch that is appended, in call order,
 * with one `writev` once the previous append is done, so a busy agent makes one file write per batch of
 * pages, not one per page.
 */

/** Default of {@link WarcWriterOptions.gzipLevel}: level 1 costs half the CPU of 6 for ~6 % more bytes. */
export const DEFAULT_WARC_GZIP_LEVEL = 1;
const RECORD_END_BYTES = 4;

/** One HTTP fetch to archive as a `request` and a `response` record. */
export interface WarcExchange {
  /** The fetched URL (`WARC-Target-URI`). */
  url: string;
  /** The server's IP address (`WARC-IP-Address`); empty when unknown. */
  ip: string;
  /** When the request was sent (`WARC-Date` of both records). */
  date: Date;
  /** Request line and headers through the blank line, one byte per char (latin1), as sent. */
  requestHeaderBlock: string;
  /** Status line and headers through the blank line, one byte per char (latin1), as received. */
  responseHeaderBlock: string;
  /** The body as on the wire (content-encoded, transfer-decoded). */
  body: Uint8Array;
  /** The body was cut at the size cap (`WARC-Truncated: length`). */
  truncated?: boolean;
}

/** Options of a {@link WarcWriter}. */
export interface WarcWriterOptions {
  /** Folder of the WARC files (created if missing). */
  dir: string;
  /** The agent's identifier, last in file names; letters, digits, `.`, `_`, `-`. */
  agentId: string;
  /**
   * First part of file names.
   * @default "ubicrawl"
   */
  filePrefix?: string;
  /**
   * A file is finished once it holds this many bytes; the exchange that crosses the bound ends it.
   * @default 1073741824 (1 GiB)
   */
  maxFileBytes?: number;
  /**
   * `software` field of each file's warcinfo record.
   * @default "ubicrawl"
   */
  software?: string;
  /**
   * zlib level of each record's gzip member (1 fastest … 9 smallest).
   * @default 1
   */
  gzipLevel?: number;
  /**
   * Compress in a worker thread, off the caller's thread; `false` compresses synchronously in `write`.
   * @default true
   */
  compressInWorker?: boolean;
}

/** Dependencies of a {@link WarcWriter}. */
export interface WarcWriterDeps {
  /** Names files and dates warcinfo records. @default systemClock */
  clock?: Clock;
}

/** Counters of a {@link WarcWriter} since it was opened. */
export interface WarcWriterStats {
  /** Records written, warcinfo included. */
  records: number;
  /** Exchanges written (two records each). */
  exchanges: number;
  /** Compressed bytes written. */
  bytes: number;
  /** Files started. */
  files: number;
  /** Leftover `.open` files repaired by {@link WarcWriter.open}. */
  recoveredFiles: number;
}

/** A file that writes are assigned to; it is created when its first record reaches the queue. */
interface FileSlot {
  name: string;
  warcinfoId: string;
  /** Bytes assigned so far: compressed sizes once known, uncompressed sizes meanwhile. */
  bytes: number;
}

/** Records waiting for one append to their file, and the callers waiting for it. */
interface AppendBatch {
  slot: FileSlot;
  /** Gzip members of each enqueue, in call order (a promise while the worker compresses them). */
  parts: (Buffer[] | Promise<Buffer[]>)[];
  /** Uncompressed bytes, counted into the slot until the compressed size is known. */
  estimate: number;
  exchanges: number;
  /** Settles when the batch is appended (or failed). */
  done: Promise<void>;
}

/** Appends request/response pairs to rotating gzipped WARC 1.1 files, recovering torn files on open. */
export class WarcWriter {
  private readonly dir: string;
  private readonly agentId: string;
  private readonly filePrefix: string;
  private readonly maxFileBytes: number;
  private readonly software: string;
  private readonly gzip: GzipMembers;
  private readonly clock: Clock;

  private state: "new" | "opening" | "open" | "closed" = "new";
  private nextSerial = 1;
  private slot: FileSlot | undefined;
  /** The live file, with the length of its whole records (what a failed write is cut back to). */
  private file: { slot: FileSlot; handle: FileHandle; goodBytes: number } | undefined;
  /** The append queue: every write runs after the previous one settled. */
  private tail: Promise<void> = Promise.resolve();
  /** The batch still taking members: queued behind {@link tail}, not yet being written. */
  private collecting: AppendBatch | undefined;
  private failure: UbiError | undefined;
  private closing: Promise<void> | undefined;
  private readonly counters: WarcWriterStats = {
    records: 0,
    exchanges: 0,
    bytes: 0,
    files: 0,
    recoveredFiles: 0,
  };

  constructor(options: WarcWriterOptions, deps: WarcWriterDeps = {}) {
    if (typeof options.dir !== "string" || options.dir === "") invalid("dir must be a non-empty path");
    if (typeof options.agentId !== "string" || !NAME_PART_PATTERN.test(options.agentId)) {
      invalid(`agentId must match ${NAME_PART_PATTERN}, got ${JSON.stringify(options.agentId)}`);
    }
    const filePrefix = options.filePrefix ?? "ubicrawl";
    if (!NAME_PART_PATTERN.test(filePrefix)) invalid(`filePrefix must match ${NAME_PART_PATTERN}`);
    const maxFileBytes = options.maxFileBytes ?? 1024 ** 3;
    if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1)
      invalid("maxFileBytes must be a positive integer");
    const software = options.software ?? "ubicrawl";
    if (/[\r\n]/.test(software)) invalid("software must be one line");
    const gzipLevel = options.gzipLevel ?? DEFAULT_WARC_GZIP_LEVEL;
    if (!Number.isInteger(gzipLevel) || gzipLevel < 1 || gzipLevel > 9) invalid("gzipLevel must be in 1..9");
    this.dir = options.dir;
    this.agentId = options.agentId;
    this.filePrefix = filePrefix;
    this.maxFileBytes = maxFileBytes;
    this.software = software;
    const inWorker = options.compressInWorker ?? true;
    if (typeof inWorker !== "boolean") invalid("compressInWorker must be a boolean");
    this.gzip = inWorker ? new WorkerGzip(gzipLevel) : new InlineGzip(gzipLevel);
    this.clock = deps.clock ?? systemClock;
  }

  /** Creates the folder, repairs and renames this agent's leftover `.open` files, and picks the next serial. */
  async open(): Promise<void> {
    if (this.state !== "new") throw new UbiError(ErrorCode.StorageFailed, "WarcWriter.open called twice");
    this.state = "opening";
    try {
      await mkdir(this.dir, { recursive: true });
      let maxSerial = 0;
      for (const entry of await readdir(this.dir)) {
        const serial = warcFileSerial(entry, this.filePrefix, this.agentId);
        if (serial === undefined) continue;
        maxSerial = Math.max(maxSerial, serial);
        if (entry.endsWith(OPEN_SUFFIX)) {
          await recoverWarcFile(join(this.dir, entry));
          this.counters.recoveredFiles++;
        }
      }
      this.nextSerial = maxSerial + 1;
    } catch (error) {
      this.state = "closed";
      throw error instanceof UbiError ? error : storageError(`cannot open WARC folder ${this.dir}`, error);
    }
    this.state = "open";
  }

  /** Archives one exchange; resolves once both records are appended (not yet synced: see {@link flush}). */
  write(exchange: WarcExchange): Promise<void> {
    if (this.state !== "open")
      return Promise.reject(new UbiError(ErrorCode.StorageFailed, "WarcWriter is not open"));
    if (this.failure) return Promise.reject(this.failure);
    try {
      return this.enqueueExchange(exchange);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * After a failed write (a full disk, say): cuts the live file back to its last whole record and
   * accepts writes again. Rejects, still failed, while the disk refuses even that.
   */
  async recover(): Promise<void> {
    if (!this.failure) return;
    await this.tail;
    const file = this.file;
    if (file) {
      try {
        await file.handle.truncate(file.goodBytes);
        await file.handle.datasync();
      } catch (error) {
        throw storageError(`cannot repair WARC file ${file.slot.name}`, error);
      }
    }
    this.failure = undefined;
  }

  /** Resolves when every write so far is appended and synced to disk. */
  async flush(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure;
    try {
      await this.file?.handle.datasync();
    } catch (error) {
      throw storageError("cannot sync the WARC file", error);
    }
  }

  /**
   * Finishes pending writes, syncs and renames the live file, stops the gzip worker; idempotent. After a write failure the
   * file stays `.open` (for the next {@link WarcWriter.open} to repair) and this rejects with the failure.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    const wasOpen = this.state === "open";
    this.state = "closed";
    this.closing = wasOpen
      ? this.tail
          .then(() => this.finishFile())
          .finally(() => this.gzip.close())
          .then(() => {
            if (this.failure) throw this.failure;
          })
      : this.gzip.close();
    return this.closing;
  }

  /** A snapshot of the counters. */
  stats(): WarcWriterStats {
    return { ...this.counters };
  }

  /** Drafts the request and response records of `exchange` and queues them (digests come later). */
  private enqueueExchange(exchange: WarcExchange): Promise<void> {
    const slot = this.currentSlot();
    const drafts = exchangeDrafts({
      url: exchange.url,
      ip: exchange.ip,
      date: exchange.date,
      requestId: newRecordId(),
      responseId: newRecordId(),
      warcinfoId: slot.warcinfoId,
      requestHeaderBlock: exchange.requestHeaderBlock,
      responseHeaderBlock: exchange.responseHeaderBlock,
      body: exchange.body,
      truncated: exchange.truncated === true,
    });
    return this.enqueue(slot, drafts, 1);
  }

  /** The file slot for the next exchange, starting a new file (and its warcinfo) when the current is full. */
  private currentSlot(): FileSlot {
    if (this.slot && this.slot.bytes < this.maxFileBytes) return this.slot;
    const now = new Date(this.clock.now());
    const name = warcFileName(this.filePrefix, now, this.nextSerial++, this.agentId);
    const slot: FileSlot = { name, warcinfoId: newRecordId(), bytes: 0 };
    this.slot = slot;
    const info = Buffer.from(
      `software: ${this.software}\r\nformat: WARC File Format 1.1\r\n` +
        "conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n" +
        `isPartOf: ${this.filePrefix}-${this.agentId}\r\n`,
      "utf8",
    );
    const warcinfo = recordDraft({
      type: "warcinfo",
      recordId: slot.warcinfoId,
      date: now,
      fields: [
        ["WARC-Filename", name],
        ["Content-Type", "application/warc-fields"],
      ],
      block: [info],
    });
    // Failures surface through `failure` on the next write, flush or close.
    this.enqueue(slot, [warcinfo], 0).catch(() => {});
    return slot;
  }

  /**
   * Hands `drafts` to the compressor now and adds them to the batch that is collecting for `slot`, or
   * starts a new batch behind the current append; resolves once the batch holding them is written.
   */
  private enqueue(slot: FileSlot, drafts: RecordDraft[], exchanges: number): Promise<void> {
    let estimate = 0;
    for (const draft of drafts) {
      estimate += draft.head.length + RECORD_END_BYTES;
      for (const piece of draft.block)
        estimate += typeof piece === "string" ? piece.length : piece.byteLength;
    }
    slot.bytes += estimate;
    const members = this.gzip.compress(drafts);
    // Awaited by the append; this only keeps an early rejection from being unhandled meanwhile.
    if (members instanceof Promise) members.catch(() => {});
    const open = this.collecting;
    const batch = open !== undefined && open.slot === slot ? open : this.startBatch(slot);
    batch.parts.push(members);
    batch.estimate += estimate;
    batch.exchanges += exchanges;
    return batch.done;
  }

  /** A new empty batch for `slot`, appended once every earlier batch is written. */
  private startBatch(slot: FileSlot): AppendBatch {
    const batch: AppendBatch = { slot, parts: [], estimate: 0, exchanges: 0, done: Promise.resolve() };
    this.collecting = batch;
    batch.done = this.tail.then(() => this.append(batch));
    this.tail = batch.done.catch(() => {});
    return batch;
  }

  /** Writes `batch` with one `writev`; from now on new records go to a later batch. */
  private async append(batch: AppendBatch): Promise<void> {
    if (this.collecting === batch) this.collecting = undefined;
    if (this.failure) throw this.failure;
    try {
      const members = (await Promise.all(batch.parts)).flat();
      let total = 0;
      for (const member of members) total += member.length;
      const handle = await this.fileFor(batch.slot);
      const { bytesWritten } = await handle.writev(members);
      if (bytesWritten !== total) throw new Error(`short write: ${bytesWritten} of ${total} bytes`);
      if (this.file?.handle === handle) this.file.goodBytes += total;
      batch.slot.bytes += total - batch.estimate;
      this.counters.bytes += total;
      this.counters.records += members.length;
      this.counters.exchanges += batch.exchanges;
    } catch (error) {
      this.failure = storageError(`cannot write to WARC file ${batch.slot.name}`, error);
      throw this.failure;
    }
  }

  /** The handle of `slot`'s file, finishing the previous file and creating this one when needed. */
  private async fileFor(slot: FileSlot): Promise<FileHandle> {
    if (this.file?.slot === slot) return this.file.handle;
    await this.finishFile();
    // "ax": append-only, and never reuse a name that already exists.
    const handle = await open(join(this.dir, slot.name + OPEN_SUFFIX), "ax");
    this.file = { slot, handle, goodBytes: 0 };
    this.counters.files++;
    return handle;
  }

  /** Syncs, closes and renames the live file; after a failure leaves it `.open` for recovery. */
  private async finishFile(): Promise<void> {
    const file = this.file;
    if (!file) return;
    this.file = undefined;
    const openPath = join(this.dir, file.slot.name + OPEN_SUFFIX);
    try {
      if (!this.failure) await file.handle.datasync();
      await file.handle.close();
      if (!this.failure) await rename(openPath, join(this.dir, file.slot.name));
    } catch (error) {
      this.failure ??= storageError(`cannot finish WARC file ${file.slot.name}`, error);
      throw this.failure;
    }
  }
}

function invalid(message: string): never {
  throw new UbiError(ErrorCode.InvalidArgument, message);
}

function storageError(message: string, cause: unknown): UbiError {
  return cause instanceof UbiError ? cause : new UbiError(ErrorCode.StorageFailed, message, { cause });
}
