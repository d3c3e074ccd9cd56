import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readdir, rename, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { type Clock, systemClock } from "../clock.js";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { defaultLogger, type Logger } from "../logging/index.js";
import { cdxjLine } from "./cdxj.js";
import { CdxjJournal } from "./cdxj-journal.js";
import {
  type AppendedRecords,
  InlineAppender,
  type RecordAppender,
  WorkerAppender,
} from "./record-appender.js";
import type { PayloadOriginal } from "./state/digest-records.js";
import { WarcDictionarySamples } from "./warc-dictionary-samples.js";
import type { RecordDraft } from "./warc-draft.js";
import { OPEN_SUFFIX, type WarcCompression, warcFileName, warcFileSerial } from "./warc-file-name.js";
import { cdxjPathOf, indexCoversFile, indexWarcFile, unfinishedIndexOf } from "./warc-indexer.js";
import { exchangeDrafts, newRecordId, recordDraft, revisitDrafts } from "./warc-record.js";
import { recoverWarcFile } from "./warc-recovery.js";
import { resolveWarcWriterOptions, type WarcWriterOptions } from "./warc-writer-options.js";
import { dictionaryFrame, type ZstdDictionary } from "./zstd-dictionary.js";

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
 */

const RECORD_END_BYTES = 4;
/** Drained appends a file slot keeps before it drops them from its list. */
const DRAINED_APPENDS_KEPT = 1024;

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

/**
 * An HTTP fetch whose payload was stored before, to archive as a `request` and a `revisit` record
 * (identical-payload-digest profile) instead of storing the payload again.
 */
export interface WarcRevisit extends Omit<WarcExchange, "body" | "truncated"> {
  /** `sha1:` digest of the payload (the original response's `WARC-Payload-Digest`). */
  payloadDigest: string;
  /** The response that stored the payload. */
  refersTo: PayloadOriginal;
  /**
   * The server answered `304 Not Modified` to a conditional GET: written with WARC 1.1's
   * server-not-modified profile, `refersTo` the URL's last capture and `payloadDigest` its payload's.
   */
  notModified?: boolean;
}

/** Dependencies of a {@link WarcWriter}. */
export interface WarcWriterDeps {
  /** Names files and dates warcinfo records. @default systemClock */
  clock?: Clock;
  /** Where an index that could not be written is reported. @default defaultLogger() */
  logger?: Logger;
  /**
   * Told of each finished file once its index is written: as a rotation or the close finishes it, and
   * at open for every finished file found in the folder (one a crash kept from being told).
   */
  onFileClosed?: (file: ClosedWarcFile) => void;
}

/** A finished WARC file with its index. */
export interface ClosedWarcFile {
  /** Its name. */
  readonly name: string;
  /** Its path. */
  readonly path: string;
  /** Its CDXJ index's path. */
  readonly indexPath: string;
}

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

/** A WARC file this writer opened, with the bytes of whole records appended to it so far. */
export interface WarcFileExtent {
  /** Its name once finished (without `.open`). */
  readonly name: string;
  readonly bytes: number;
}

/** A file that writes are assigned to; it is created when its first record is queued. */
interface FileSlot {
  name: string;
  warcinfoId: string;
  /** The dictionary of a `.warc.zst` file, written first in it. */
  dictionary?: ZstdDictionary;
  /** Bytes assigned so far: compressed sizes once known, uncompressed sizes meanwhile. */
  bytes: number;
  /** The open file's descriptor; until then, the records waiting for it, in call order. */
  fd?: number;
  /**
   * Every append to the file in call order, with what it wrote once settled (null: not kept, after a
   * failure). Appends settle out of call order (those queued before the file opened settle a few
   * microtasks late), so index lines take their offsets here, in call order, from {@link indexedBytes}.
   */
  appends: { indexed: IndexedRecord | undefined; records?: AppendedRecords | null }[];
  /** How many of {@link appends} have given their index line. */
  drained: number;
  /** Offset of the first record of the next append to drain. */
  indexedBytes: number;
  waiting: {
    drafts: RecordDraft[];
    resolve: (appended: AppendedRecords | PromiseLike<AppendedRecords>) => void;
    reject: (error: unknown) => void;
  }[];
}

/** The file being written: its slot, handle, the length of its whole records, its index lines. */
interface LiveFile {
  slot: FileSlot;
  handle: FileHandle;
  /** What a failed write cuts the file back to; the offset of the next record. */
  goodBytes: number;
  index: CdxjJournal;
}

/** The record of an append that gets an index line: its place among the drafts and what the line says. */
interface IndexedRecord {
  /** Index of the record among the call's drafts. */
  at: number;
  url: string;
  date: Date;
  responseHeaderBlock: string;
  /** A revisit's payload digest (`sha1:…`); a response's is computed with its record. */
  revisitDigest?: string;
}

/** Appends request/response pairs to rotating compressed WARC 1.1 files, recovering torn files on open. */
export class WarcWriter {
  private readonly dir: string;
  private readonly agentId: string;
  private readonly filePrefix: string;
  private readonly maxFileBytes: number;
  private readonly software: string;
  private readonly compression: WarcCompression;
  private readonly dictionaryBytes: number;
  private readonly samples = new WarcDictionarySamples();
  private readonly appender: RecordAppender;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly onFileClosed: ((file: ClosedWarcFile) => void) | undefined;
  private readonly indexObservers = new Set<(line: string) => void>();

  private state: "new" | "opening" | "open" | "closed" = "new";
  private nextSerial = 1;
  private slot: FileSlot | undefined;
  /** The live file. */
  private file: LiveFile | undefined;
  /** Indexes of finished files being sorted and written. */
  private readonly indexing = new Set<Promise<void>>();
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
    this.dir = resolved.dir;
    this.agentId = resolved.agentId;
    this.filePrefix = resolved.filePrefix;
    this.maxFileBytes = resolved.maxFileBytes;
    this.software = resolved.software;
    this.compression = resolved.compression;
    this.dictionaryBytes = resolved.dictionaryBytes;
    const codec = { kind: resolved.compression, level: resolved.level };
    this.appender = resolved.compressInWorker ? new WorkerAppender(codec) : new InlineAppender(codec);
    this.clock = deps.clock ?? systemClock;
    this.logger = deps.logger ?? defaultLogger();
    this.onFileClosed = deps.onFileClosed;
  }

  /**
   * Creates the folder, repairs and renames this agent's leftover `.open` files, indexes again its files
   * whose index is missing or short, and picks the next serial.
   */
  async open(): Promise<void> {
    if (this.state !== "new") throw new UbiError(ErrorCode.StorageFailed, "WarcWriter.open called twice");
    this.state = "opening";
    try {
      await mkdir(this.dir, { recursive: true });
      let maxSerial = 0;
      const finished: string[] = [];
      for (const entry of await readdir(this.dir)) {
        const indexed = unfinishedIndexOf(entry);
        if (indexed !== undefined) {
          if (warcFileSerial(indexed, this.filePrefix, this.agentId) !== undefined) {
            await unlink(join(this.dir, entry));
          }
          continue;
        }
        const serial = warcFileSerial(entry, this.filePrefix, this.agentId);
        if (serial === undefined) continue;
        maxSerial = Math.max(maxSerial, serial);
        if (entry.endsWith(OPEN_SUFFIX)) {
          const { path } = await recoverWarcFile(join(this.dir, entry));
          this.counters.recoveredFiles++;
          if (path !== undefined) finished.push(path);
        } else {
          finished.push(join(this.dir, entry));
        }
      }
      for (const path of finished) {
        if (!(await indexCoversFile(path))) {
          await indexWarcFile(path);
          this.counters.reindexedFiles++;
        }
        this.tellClosed(path);
      }
      this.nextSerial = maxSerial + 1;
    } catch (error) {
      this.state = "closed";
      throw error instanceof UbiError ? error : storageError(`cannot open WARC folder ${this.dir}`, error);
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
      const drafts = revisitDrafts({
        ...revisit,
        requestId: newRecordId(),
        responseId: newRecordId(),
        warcinfoId: slot.warcinfoId,
      });
      const indexed = {
        at: 1,
        url: revisit.url,
        date: revisit.date,
        responseHeaderBlock: revisit.responseHeaderBlock,
        revisitDigest: revisit.payloadDigest,
      };
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
          .finally(() => Promise.all(this.indexing))
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
    return this.dir;
  }

  /**
   * Calls `observer` with the CDXJ index line of each response or revisit record from now on, once the
   * record is in its file (its `filename` the file's finished name): the console's replay. Returns the
   * function that stops it.
   */
  observeIndexed(observer: (line: string) => void): () => void {
    this.indexObservers.add(observer);
    return () => this.indexObservers.delete(observer);
  }

  /** Drafts the request and response records of `exchange` and queues them (digests come later). */
  private enqueueExchange(exchange: WarcExchange): Promise<string> {
    const slot = this.currentSlot();
    const responseId = newRecordId();
    const drafts = exchangeDrafts({
      url: exchange.url,
      ip: exchange.ip,
      date: exchange.date,
      requestId: newRecordId(),
      responseId,
      warcinfoId: slot.warcinfoId,
      requestHeaderBlock: exchange.requestHeaderBlock,
      responseHeaderBlock: exchange.responseHeaderBlock,
      body: exchange.body,
      truncated: exchange.truncated === true,
    });
    if (this.compression === "zstd" && this.dictionaryBytes > 0) this.samples.add(drafts);
    const indexed = {
      at: 1,
      url: exchange.url,
      date: exchange.date,
      responseHeaderBlock: exchange.responseHeaderBlock,
    };
    return this.enqueue(slot, drafts, 1, indexed).then(() => responseId);
  }

  /** The file slot for the next exchange, starting a new file (and its warcinfo) when the current is full. */
  private currentSlot(): FileSlot {
    if (this.slot && this.slot.bytes < this.maxFileBytes) return this.slot;
    const now = new Date(this.clock.now());
    const name = warcFileName(this.filePrefix, now, this.nextSerial++, this.agentId, this.compression);
    const slot: FileSlot = {
      name,
      warcinfoId: newRecordId(),
      bytes: 0,
      waiting: [],
      appends: [],
      drained: 0,
      indexedBytes: 0,
    };
    if (this.compression === "zstd" && this.dictionaryBytes > 0) {
      slot.dictionary = this.samples.dictionary(this.dictionaryBytes);
    }
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
    let estimate = 0;
    for (const draft of drafts) {
      estimate += draft.head.length + RECORD_END_BYTES;
      for (const piece of draft.block)
        estimate += typeof piece === "string" ? piece.length : piece.byteLength;
    }
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
    const file = this.file;
    if (file?.slot !== slot) return;
    for (
      let place = slot.appends[slot.drained];
      place?.records !== undefined;
      place = slot.appends[slot.drained]
    ) {
      slot.drained++;
      if (place.records === null) continue;
      if (place.indexed) {
        const line = indexLine(place.indexed, place.records, slot.indexedBytes, slot.name);
        file.index.add(line);
        for (const observer of this.indexObservers) observer(line);
      }
      slot.indexedBytes += totalBytes(place.records);
    }
    if (slot.drained >= DRAINED_APPENDS_KEPT) {
      slot.appends.splice(0, slot.drained);
      slot.drained = 0;
    }
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
    // "ax": append-only, and never reuse a name that already exists.
    const path = join(this.dir, slot.name + OPEN_SUFFIX);
    const handle = await open(path, "ax");
    let goodBytes = 0;
    if (slot.dictionary) {
      // The dictionary frame comes first: every record's frame needs it. A file it could not be
      // written to is removed (it holds nothing yet), and the failure is the writer's.
      const frame = dictionaryFrame(slot.dictionary);
      try {
        const { bytesWritten } = await handle.write(frame, 0, frame.length);
        if (bytesWritten !== frame.length) throw new Error(`short write: ${bytesWritten} of ${frame.length}`);
      } catch (error) {
        await handle.close().catch(() => {});
        await unlink(path).catch(() => {});
        throw storageError(`cannot write to WARC file ${slot.name}`, error);
      }
      goodBytes = frame.length;
      slot.bytes += frame.length;
      this.counters.bytes += frame.length;
      this.appender.useDictionary(handle.fd, slot.dictionary.bytes);
    }
    slot.indexedBytes = goodBytes;
    this.file = { slot, handle, goodBytes, index: new CdxjJournal(join(this.dir, slot.name)) };
    this.counters.files++;
    return handle.fd;
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
    const openPath = join(this.dir, file.slot.name + OPEN_SUFFIX);
    try {
      try {
        if (!this.failure) await this.sync(file);
      } finally {
        // Closed even when the sync failed: the descriptor must not wait for the garbage collector.
        await file.handle.close();
      }
      if (!this.failure) await rename(openPath, join(this.dir, file.slot.name));
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
    this.writeIndex(file);
  }

  /**
   * Sorts and writes the finished `file`'s index in the background (the next file need not wait); a
   * failure costs only the index, which the next {@link open} writes again.
   */
  private writeIndex(file: LiveFile): void {
    const task = file.index
      .finish()
      .then(() => this.tellClosed(join(this.dir, file.slot.name)))
      .catch((error: unknown) => {
        this.logger.warn(
          { event: "warc-index-failed", file: file.slot.name, err: error },
          `cannot write the CDXJ index of ${file.slot.name}; it is written again when the agent next starts`,
        );
      })
      .finally(() => {
        this.indexing.delete(task);
      });
    this.indexing.add(task);
  }

  /** Tells {@link WarcWriterDeps.onFileClosed} of the finished, indexed file at `path`. */
  private tellClosed(path: string): void {
    this.onFileClosed?.({ name: basename(path), path, indexPath: cdxjPathOf(path) });
  }
}

/** Compressed bytes of all the records of one append. */
function totalBytes(records: AppendedRecords): number {
  let bytes = 0;
  for (const size of records.sizes) bytes += size;
  return bytes;
}

/** The index line of `indexed`, appended as `records` at `offset` of the WARC file `filename`. */
function indexLine(
  indexed: IndexedRecord,
  records: AppendedRecords,
  offset: number,
  filename: string,
): string {
  let at = offset;
  for (let i = 0; i < indexed.at; i++) at += records.sizes[i] ?? 0;
  const digest = indexed.revisitDigest ?? `sha1:${records.payloadDigests[indexed.at] ?? ""}`;
  return cdxjLine({
    url: indexed.url,
    date: indexed.date,
    revisit: indexed.revisitDigest !== undefined,
    httpHeaderBlock: indexed.responseHeaderBlock,
    digest: digest.slice("sha1:".length),
    offset: at,
    length: records.sizes[indexed.at] ?? 0,
    filename,
  });
}

function storageError(message: string, cause: unknown): UbiError {
  return cause instanceof UbiError ? cause : new UbiError(ErrorCode.StorageFailed, message, { cause });
}
