// Over 400 lines on purpose: a WARC file's life (a slot, opening, appending, rotation, finishing, the
// sync a commit waits on, recovery of `.open` files) is ordered by one chain of promises (`tail`), and
// each step reads the others' state; what stands apart is in files of its own (the appender, the live
// file, the file slot, the index feed, drafting, dictionary samples, options).
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { defaultLogger } from "../logging/index.js";
import {
  type AppendedRecords,
  InlineAppender,
  type RecordAppender,
  WorkerAppender,
} from "./record-appender.js";
import { WarcDictionarySamples } from "./warc-dictionary-samples.js";
import type { RecordDraft } from "./warc-draft.js";
import { draftExchange, draftRevisit, type WarcExchange, type WarcRevisit } from "./warc-exchange.js";
import { OPEN_SUFFIX, warcFileName } from "./warc-file-name.js";
import {
  estimatedBytes,
  type FileSlot,
  type IndexedRecord,
  newFileSlot,
  totalBytes,
  type WarcFileExtent,
} from "./warc-file-slot.js";
import { scanWarcFolder } from "./warc-folder-scan.js";
import { WarcIndexFeed } from "./warc-index-feed.js";
import { createLiveFile, type LiveFile } from "./warc-live-file.js";
import {
  type ResolvedWarcWriterOptions,
  resolveWarcWriterOptions,
  type WarcWriterDeps,
  type WarcWriterOptions,
} from "./warc-writer-options.js";

/**
 * The WARC 1.1 writer: one gzip member per record (`.warc.gz`), or one Zstandard frame per record
 * after a dictionary frame (`.warc.zst`, the IIPC WARC Zstandard profile), files rotated by size and
 * named `<prefix>-<yyyyMMddHHmmss>-<serial>-<agentId>.warc.gz` (or `.warc.zst`), with `.open` appended while
 * being written.
 * Each `.warc.zst` file carries its own dictionary, made of the exchanges written just before it
 * (see `warc-dictionary-samples.ts`).
 *
 * Records are drafted as soon as `write` is called and handed, with the live file's descriptor, to the
 * appender (a worker thread by default: see `record-appender.ts`), which finishes, compresses and
 * appends them in call order, with one `writev` for all the records of an event-loop turn: a busy agent
 * makes one file write per batch of pages, not one per page. Records of a file not yet open wait for it
 * and go out, in order, as soon as it is.
 *
 * Each file gets a CDXJ index beside it (`<file>.cdxj`, see `cdxj.ts`): a line per response or revisit
 * as it is appended, sorted into the index once the file is finished (`cdxj-journal.ts`). At open, a
 * file whose index is missing or falls short of its end (a crash before the index was written) is
 * indexed again from its records.
 *
 * Over ~400 lines for a reason: what is left here is one state machine — the slot taking records, the
 * live file, the tail of appends, the sticky failure and lost writes, the finishing of the previous
 * file — whose fields every method reads and sets together; its parts with a concept of their own are
 * apart (`warc-exchange.ts`, `warc-file-slot.ts`, `warc-live-file.ts`, `warc-index-feed.ts`,
 * `warc-folder-scan.ts`, `warc-writer-options.ts`).
 */

/** Counters of a {@link WarcWriter} since it was opened. */
export interface WarcWriterStats {
  /** Records written, warcinfo included. */
  records: number;
  /** Exchanges written (two records each), revisits included. */
  exchanges: number;
  /** Exchanges written as a request and a revisit record. */
  revisits: number;
  /** Compressed bytes written. */
  bytes: number;
  /** Files started. */
  files: number;
  /** Leftover `.open` files repaired by {@link WarcWriter.open}. */
  recoveredFiles: number;
  /** Files indexed again by {@link WarcWriter.open}: their index was missing or fell short of their end. */
  reindexedFiles: number;
}

/** Appends request/response pairs to rotating compressed WARC 1.1 files, recovering torn files on open. */
export class WarcWriter {
  private readonly options: ResolvedWarcWriterOptions;
  private readonly samples = new WarcDictionarySamples();
  private readonly appender: RecordAppender;
  private readonly clock: Clock;
  private readonly indexFeed: WarcIndexFeed;

  private state: "new" | "opening" | "open" | "closed" = "new";
  private nextSerial = 1;
  private slot: FileSlot | undefined;
  /** The live file. */
  private file: LiveFile | undefined;
  /** Settles once every record queued so far is appended (or failed). */
  private tail: Promise<void> = Promise.resolve();
  /** The finishing (sync, close, rename) of the file before the live one, while it runs. */
  private finishing: Promise<void> | undefined;
  private failure: UbiError | undefined;
  /**
   * A failed sync: the kernel may have dropped bytes it had accepted, and reports that only once, so
   * no later sync can vouch for them. Sticky: {@link recover} cannot clear it; the agent must restart
   * (what its state does not record as done is fetched again).
   */
  private lostWrites: UbiError | undefined;
  private closing: Promise<void> | undefined;
  /** The files this writer finished (or is finishing), with their final lengths. */
  private readonly finishedFiles: WarcFileExtent[] = [];
  private readonly counters: WarcWriterStats = {
    records: 0,
    exchanges: 0,
    revisits: 0,
    bytes: 0,
    files: 0,
    recoveredFiles: 0,
    reindexedFiles: 0,
  };

  constructor(options: WarcWriterOptions, deps: WarcWriterDeps = {}) {
    const resolved = resolveWarcWriterOptions(options);
    this.options = resolved;
    const codec = { kind: resolved.compression, level: resolved.level };
    this.appender = resolved.compressInWorker ? new WorkerAppender(codec) : new InlineAppender(codec);
    this.clock = deps.clock ?? systemClock;
    this.indexFeed = new WarcIndexFeed({
      logger: deps.logger ?? defaultLogger(),
      onFileClosed: deps.onFileClosed,
    });
  }

  /**
   * Creates the folder, repairs and renames this agent's leftover `.open` files, indexes again its files
   * whose index is missing or short, and picks the next serial.
   */
  async open(): Promise<void> {
    if (this.state !== "new") throw new UbiError(ErrorCode.StorageFailed, "WarcWriter.open called twice");
    this.state = "opening";
    try {
      await mkdir(this.options.dir, { recursive: true });
      const owner = {
        dir: this.options.dir,
        filePrefix: this.options.filePrefix,
        agentId: this.options.agentId,
      };
      this.nextSerial = await scanWarcFolder(owner, this.counters, (file) => this.indexFeed.tellClosed(file));
    } catch (error) {
      this.state = "closed";
      throw error instanceof UbiError
        ? error
        : storageError(`cannot open WARC folder ${this.options.dir}`, error);
    }
    this.state = "open";
  }

  /**
   * Archives one exchange; resolves, with the response record's `WARC-Record-ID`, once both records
   * are appended (not yet synced: see {@link flush}).
   */
  write(exchange: WarcExchange): Promise<string> {
    return this.accept(() => this.enqueueExchange(exchange));
  }

  /**
   * Archives an exchange whose payload is stored already, as a request and a revisit record; resolves
   * once both are appended.
   */
  writeRevisit(revisit: WarcRevisit): Promise<void> {
    return this.accept(() => {
      const slot = this.currentSlot();
      const { drafts, indexed } = draftRevisit(revisit, slot.warcinfoId);
      return this.enqueue(slot, drafts, 1, indexed).then(() => {
        this.counters.revisits++;
      });
    });
  }

  /**
   * Runs `enqueue` when the writer takes records; a refusal or a thrown error is a rejection. A failed
   * append also surfaces through `failure` (the next write, flush or close), so a caller that awaits
   * the result later, or not at all, gets no unhandled rejection meanwhile.
   */
  private accept<T>(enqueue: () => Promise<T>): Promise<T> {
    if (this.state !== "open")
      return Promise.reject(new UbiError(ErrorCode.StorageFailed, "WarcWriter is not open"));
    if (this.failure) return Promise.reject(this.failure);
    let result: Promise<T>;
    try {
      result = enqueue();
    } catch (error) {
      return Promise.reject(error);
    }
    result.catch(() => {});
    return result;
  }

  /**
   * After a failed write (a full disk, say): cuts the live file back to its last whole record and
   * accepts writes again. Rejects, still failed, while the disk refuses even that.
   */
  async recover(): Promise<void> {
    if (this.lostWrites) throw this.lostWrites;
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
    // A file that could not even be opened holds nothing, not even its warcinfo: the next write starts
    // a new one.
    if (this.slot !== undefined && this.slot.fd === undefined) this.slot = undefined;
    this.failure = undefined;
  }

  /** Resolves when every write so far is appended and synced to disk. */
  async flush(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure;
    await this.sync(this.file);
  }

  /**
   * Resolves when every record whose {@link write} has resolved is synced to disk, without waiting for
   * records still being compressed: cheaper than {@link flush} for a caller that only needs what it was
   * told is appended to be durable. A file finished by a rotation was synced before the next one took
   * records, so syncing the live file (after any rotation under way) covers them all.
   */
  async syncAppended(): Promise<void> {
    if (this.failure) throw this.failure;
    while (this.finishing) await this.finishing;
    // Issued before anything else runs, so a rotation starting now closes the file after it: a
    // FileHandle's close waits for the operations pending on it.
    await this.sync(this.file);
  }

  /** Syncs `file`; a failure is {@link lostWrites}, for good. */
  private async sync(file: LiveFile | undefined): Promise<void> {
    if (!file) return;
    try {
      await file.handle.datasync();
    } catch (error) {
      this.lostWrites ??= new UbiError(
        ErrorCode.StorageFailed,
        `cannot sync WARC file ${file.slot.name} (${errorMessage(error)}): the disk may have dropped records ` +
          "it had accepted, so this agent stops archiving; restart it (pages not recorded as done are fetched again)",
        { cause: error },
      );
      this.failure = this.lostWrites;
      throw this.lostWrites;
    }
  }

  /**
   * Finishes pending writes, syncs and renames the live file, writes the indexes still due, stops the
   * compressing worker; idempotent. After a write failure the
   * file stays `.open` (for the next {@link WarcWriter.open} to repair) and this rejects with the failure.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    const wasOpen = this.state === "open";
    this.state = "closed";
    this.closing = wasOpen
      ? this.tail
          .then(() => this.finishFile())
          .finally(() => this.indexFeed.settled())
          .finally(() => this.appender.close())
          .then(() => {
            if (this.failure) throw this.failure;
          })
      : this.appender.close();
    return this.closing;
  }

  /**
   * Every file this writer opened, finished ones first, with the bytes of whole records appended to it:
   * once {@link syncAppended} (or {@link flush}) resolves after this call, that many bytes of each are on
   * the disk.
   */
  fileExtents(): WarcFileExtent[] {
    const live = this.file;
    return live === undefined
      ? [...this.finishedFiles]
      : [...this.finishedFiles, { name: live.slot.name, bytes: live.goodBytes }];
  }

  /** A snapshot of the counters. */
  stats(): WarcWriterStats {
    return { ...this.counters };
  }

  /** The file being written: its finished name and the length of its whole records; undefined between files. */
  liveExtent(): WarcFileExtent | undefined {
    const live = this.file;
    return live === undefined ? undefined : { name: live.slot.name, bytes: live.goodBytes };
  }

  /** The folder the files are written to (finished ones, and the live one with `.open`). */
  get folder(): string {
    return this.options.dir;
  }

  /**
   * Calls `observer` with the CDXJ index line of each response or revisit record from now on, once the
   * record is in its file (its `filename` the file's finished name): the console's replay. Returns the
   * function that stops it.
   */
  observeIndexed(observer: (line: string) => void): () => void {
    return this.indexFeed.observe(observer);
  }

  /** Drafts the request and response records of `exchange` and queues them (digests come later). */
  private enqueueExchange(exchange: WarcExchange): Promise<string> {
    const slot = this.currentSlot();
    const { drafts, indexed, responseId } = draftExchange(exchange, slot.warcinfoId);
    if (this.options.compression === "zstd" && this.options.dictionaryBytes > 0) this.samples.add(drafts);
    return this.enqueue(slot, drafts, 1, indexed).then(() => responseId);
  }

  /** The file slot for the next exchange, starting a new file (and its warcinfo) when the current is full. */
  private currentSlot(): FileSlot {
    if (this.slot && this.slot.bytes < this.options.maxFileBytes) return this.slot;
    const now = new Date(this.clock.now());
    const name = warcFileName(
      this.options.filePrefix,
      now,
      this.nextSerial++,
      this.options.agentId,
      this.options.compression,
    );
    const dictionary =
      this.options.compression === "zstd" && this.options.dictionaryBytes > 0
        ? this.samples.dictionary(this.options.dictionaryBytes)
        : undefined;
    const { slot, warcinfo } = newFileSlot(name, now, this.options, dictionary);
    this.slot = slot;
    // Failures surface through `failure` on the next write, flush or close.
    this.enqueue(slot, [warcinfo], 0).catch(() => {});
    return slot;
  }

  /**
   * Hands `drafts` to the appender now, or once `slot`'s file is open; resolves once they are appended,
   * with the line of `indexed` taken by the file's index.
   * Appends complete in call order, so each one's bytes extend the file's run of whole records.
   */
  private enqueue(
    slot: FileSlot,
    drafts: RecordDraft[],
    exchanges: number,
    indexed?: IndexedRecord,
  ): Promise<void> {
    const estimate = estimatedBytes(drafts);
    slot.bytes += estimate;
    const place: FileSlot["appends"][number] = { indexed };
    slot.appends.push(place);
    const appended =
      slot.fd === undefined ? this.whenOpen(slot, drafts) : this.appender.append(slot.fd, drafts);
    const done = appended.then(
      (records) => {
        // Appended after an earlier failure: `recover` cuts the file back before these bytes.
        if (this.failure) {
          place.records = null;
          this.drainIndex(slot);
          throw this.failure;
        }
        const bytes = totalBytes(records);
        place.records = records;
        this.drainIndex(slot);
        if (this.file?.slot === slot) this.file.goodBytes += bytes;
        slot.bytes += bytes - estimate;
        this.counters.bytes += bytes;
        this.counters.records += drafts.length;
        this.counters.exchanges += exchanges;
      },
      (error: unknown) => {
        place.records = null;
        this.drainIndex(slot);
        this.failure ??= storageError(`cannot write to WARC file ${slot.name}`, error);
        throw this.failure;
      },
    );
    const previous = this.tail;
    this.tail = done.then(
      () => previous,
      () => previous,
    );
    return done;
  }

  /** Gives the index lines of `slot`'s settled appends, in call order, up to the first one still pending. */
  private drainIndex(slot: FileSlot): void {
    if (this.file?.slot === slot) this.indexFeed.drain(this.file);
  }

  /**
   * Queues `drafts` until `slot`'s file is open; the first call opens it, once every record of the
   * previous file is appended and that file is finished.
   */
  private whenOpen(slot: FileSlot, drafts: RecordDraft[]): Promise<AppendedRecords> {
    const appended = new Promise<AppendedRecords>((resolve, reject) =>
      slot.waiting.push({ drafts, resolve, reject }),
    );
    if (slot.waiting.length === 1) {
      this.tail
        .then(() => this.openFile(slot))
        .then(
          (fd) => {
            // All at once, so records queued meanwhile go out in call order, before any later one.
            slot.fd = fd;
            for (const { drafts: waiting, resolve } of slot.waiting)
              resolve(this.appender.append(fd, waiting));
          },
          (error: unknown) => {
            for (const { reject } of slot.waiting) reject(error);
          },
        )
        .finally(() => {
          slot.waiting = [];
        });
    }
    return appended;
  }

  /** Finishes the previous file and creates `slot`'s; returns its descriptor. */
  private async openFile(slot: FileSlot): Promise<number> {
    if (this.failure) throw this.failure;
    await this.finishFile();
    const file = await createLiveFile(this.options.dir, slot);
    if (slot.dictionary) {
      slot.bytes += file.goodBytes;
      this.counters.bytes += file.goodBytes;
      this.appender.useDictionary(file.handle.fd, slot.dictionary.bytes);
    }
    slot.indexedBytes = file.goodBytes;
    this.file = file;
    this.counters.files++;
    return file.handle.fd;
  }

  /** Syncs, closes and renames the live file; after a failure leaves it `.open` for recovery. */
  private finishFile(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    this.file = undefined;
    // Every append to it is done: its length is final, and synced once `finishing` resolves.
    this.finishedFiles.push({ name: file.slot.name, bytes: file.goodBytes });
    this.finishing = this.finish(file).finally(() => {
      this.finishing = undefined;
    });
    return this.finishing;
  }

  private async finish(file: LiveFile): Promise<void> {
    const openPath = join(this.options.dir, file.slot.name + OPEN_SUFFIX);
    try {
      try {
        if (!this.failure) await this.sync(file);
      } finally {
        // Closed even when the sync failed: the descriptor must not wait for the garbage collector.
        await file.handle.close();
      }
      if (!this.failure) await rename(openPath, join(this.options.dir, file.slot.name));
    } catch (error) {
      this.failure ??= storageError(`cannot finish WARC file ${file.slot.name}`, error);
      await file.index.discard();
      throw this.failure;
    }
    if (this.failure) {
      // Left `.open`: the next open recovers and indexes it.
      await file.index.discard();
      return;
    }
    this.indexFeed.finish(file, this.options.dir);
  }
}
function storageError(message: string, cause: unknown): UbiError {
  return cause instanceof UbiError ? cause : new UbiError(ErrorCode.StorageFailed, message, { cause });
}
