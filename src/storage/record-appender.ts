import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ErrorCode, UbiError } from "../errors.js";
import { FINISH_SOURCE, packDrafts, type RecordDraft } from "./warc-draft.js";

/**
 * The last steps of a WARC record: finishing (SHA-1 digests), compression (one gzip member or Zstandard
 * frame per record) and the append to its file. Compressing a 17 KiB page costs ~0.15 ms of CPU even at level 1, the largest
 * single cost of a fetch, so by default all three run "on the side", in a worker thread, which leaves
 * the crawler's main thread to fetch and parse while a second core finishes records. The worker writes
 * the members itself: they never travel back to the main thread, and an append costs no thread-pool
 * round trip (~20 µs of CPU each on this machine, most of it waking threads). Synchronous `gzipSync`
 * and `writevSync` in either thread, because zlib's async API costs ~150 µs of CPU a call in stream and
 * thread-pool overhead, more than the compression itself.
 */
export interface RecordAppender {
  /**
   * Finishes and compresses `drafts` and appends them to the file open as `fd`, after the records of
   * every earlier call; resolves with each record's compressed size and payload digest. On a failed
   * write it rejects, and so do the calls sent with it; the file may then end with part of their records.
   */
  append(fd: number, drafts: readonly RecordDraft[]): Promise<AppendedRecords>;
  /**
   * Compresses the records appended to `fd` from now on with `dictionary` (Zstandard only), until
   * another call for the same descriptor: a new file may reuse a closed one's number.
   */
  useDictionary(fd: number, dictionary: Uint8Array): void;
  /** Stops the worker, if any; pending calls reject. Idempotent. */
  close(): Promise<void>;
}

/** What one {@link RecordAppender.append} wrote, record by record (what a record's index line needs). */
export interface AppendedRecords {
  /** Compressed size of each record (its gzip member or Zstandard frame), in order. */
  readonly sizes: readonly number[];
  /** Each record's `WARC-Payload-Digest` value as computed there (base32), or null where its draft carried one. */
  readonly payloadDigests: readonly (string | null)[];
}

/** The compression of every record an appender writes (see `FINISH_SOURCE`). */
export interface RecordCodec {
  readonly kind: "gzip" | "zstd";
  readonly level: number;
}

type FinishRecords = (
  bytes: Uint8Array,
  layout: Int32Array,
  codec: RecordCodec,
  dictionaries: readonly (Uint8Array | undefined)[],
) => Buffer[];
type PayloadDigests = (bytes: Uint8Array, layout: Int32Array) => (string | null)[];
type WriteMembers = (fd: number, members: readonly Buffer[]) => number;
type InlineCode = {
  finishRecords: FinishRecords;
  payloadDigests: PayloadDigests;
  writeMembers: WriteMembers;
};

/** `writeMembers(fd, members)`: one `writev`, a short write being an error (shared like {@link FINISH_SOURCE}). */
const WRITE_SOURCE = `
const { writevSync } = require("node:fs");
function writeMembers(fd, members) {
  let total = 0;
  for (const member of members) total += member.length;
  const written = writevSync(fd, members);
  if (written !== total) throw new Error("short write: " + written + " of " + total + " bytes");
  return total;
}
`;

/** The same finishing and writing code the worker runs, compiled once for this thread. */
let inline: InlineCode | undefined;

function inlineCode(): InlineCode {
  // Built from the worker's source so both paths write identical records.
  inline ??= new Function(
    "require",
    `${FINISH_SOURCE}\n${WRITE_SOURCE}\nreturn { finishRecords, payloadDigests, writeMembers };`,
  )(createRequire(import.meta.url)) as InlineCode;
  return inline;
}

/** Finishes, compresses and appends on the calling thread, during the call. */
export class InlineAppender implements RecordAppender {
  private readonly dictionaries = new Map<number, Uint8Array>();

  constructor(private readonly codec: RecordCodec) {}

  append(fd: number, drafts: readonly RecordDraft[]): Promise<AppendedRecords> {
    try {
      const { bytes, layout } = packDrafts(drafts);
      const { finishRecords, payloadDigests, writeMembers } = inlineCode();
      const dictionaries = drafts.map(() => this.dictionaries.get(fd));
      const records = new Uint8Array(bytes);
      const members = finishRecords(records, layout, this.codec, dictionaries);
      writeMembers(fd, members);
      return Promise.resolve({
        sizes: members.map((member) => member.length),
        payloadDigests: payloadDigests(records, layout),
      });
    } catch (error) {
      return Promise.reject(appendError(error));
    }
  }

  useDictionary(fd: number, dictionary: Uint8Array): void {
    this.dictionaries.set(fd, dictionary);
  }

  async close(): Promise<void> {}
}

// The worker is inline JavaScript (eval), so it runs the same from compiled dist/ and from TypeScript
// sources under test. A message carries every draft queued during one event-loop turn, packed back to
// back in one transferred buffer (cloning costs far more than a transfer, and each message wakes the
// other thread), with each call's file and record count, and the dictionaries of files opened since the
// last message, each with the number of calls before it (it applies from that call on, in call order). Consecutive calls to one file go out in one `writev`; after a failed write the rest of
// the message is not written. The answer is the compressed size of each record written, in order, and
// every record's payload digest.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
${FINISH_SOURCE}
${WRITE_SOURCE}
const dictionaryOf = new Map();
parentPort.on("message", ({ batch, codec, bytes, layout, fds, counts, newDictionaries }) => {
  const sizes = [];
  let digests = [];
  try {
    const dictionaries = [];
    let next = 0;
    for (let call = 0; call <= fds.length; call++) {
      for (; next < newDictionaries.length && newDictionaries[next][2] <= call; next++) {
        dictionaryOf.set(newDictionaries[next][0], newDictionaries[next][1]);
      }
      if (call === fds.length) break;
      for (let i = 0; i < counts[call]; i++) dictionaries.push(dictionaryOf.get(fds[call]));
    }
    const records = new Uint8Array(bytes);
    const members = finishRecords(records, layout, codec, dictionaries);
    digests = payloadDigests(records, layout);
    let first = 0;
    for (let call = 0; call < fds.length; ) {
      // The calls [call, end) go to the same file: one writev.
      let end = call;
      let last = first;
      while (end < fds.length && fds[end] === fds[call]) {
        last += counts[end];
        end++;
      }
      const written = members.slice(first, last);
      writeMembers(fds[call], written);
      for (const member of written) sizes.push(member.length);
      first = last;
      call = end;
    }
    parentPort.postMessage({ batch, sizes, digests });
  } catch (error) {
    parentPort.postMessage({ batch, sizes, digests, error: String(error) });
  }
});
`;

interface WorkerReply {
  batch: number;
  /** Compressed size of each record written, in order (the records of a prefix of the calls). */
  sizes: number[];
  /** Payload digest of each record of the batch (see {@link AppendedRecords.payloadDigests}); empty if none was finished. */
  digests: (string | null)[];
  error?: string;
}

/** One `append` call waiting for its write. */
interface Job {
  fd: number;
  records: number;
  resolve: (appended: AppendedRecords) => void;
  reject: (error: Error) => void;
}

/** Finishes, compresses and appends in one worker thread; calls are written in the order they were made. */
export class WorkerAppender implements RecordAppender {
  private worker: Worker | undefined;
  /** Jobs of the current event-loop turn, sent together by {@link send}. */
  private queued: { jobs: Job[]; drafts: RecordDraft[] } | undefined;
  private readonly inFlight = new Map<number, Job[]>();
  private nextBatch = 1;
  private failure: UbiError | undefined;
  private closed = false;
  /**
   * Dictionaries not yet sent to the worker: descriptor, dictionary, and the calls queued before it in
   * the next message (it applies from there on). They go with the next message.
   */
  private newDictionaries: [number, Uint8Array, number][] = [];

  constructor(private readonly codec: RecordCodec) {}

  /** Messages posted to the worker so far (each carries every call gathered since the last one). */
  get messagesSent(): number {
    return this.nextBatch - 1;
  }

  append(fd: number, drafts: readonly RecordDraft[]): Promise<AppendedRecords> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new UbiError(ErrorCode.StorageFailed, "WARC worker is closed"));
    if (this.queued === undefined) {
      this.queued = { jobs: [], drafts: [] };
      // While a message is with the worker, calls gather until its answer (Nagle): a busy agent sends a
      // few large messages instead of one per page, and an idle one loses no time.
      if (this.inFlight.size === 0) setImmediate(() => this.send());
    }
    const queued = this.queued;
    for (const draft of drafts) queued.drafts.push(draft);
    return new Promise<AppendedRecords>((resolve, reject) => {
      queued.jobs.push({ fd, records: drafts.length, resolve, reject });
    });
  }

  useDictionary(fd: number, dictionary: Uint8Array): void {
    this.newDictionaries.push([fd, dictionary, this.queued?.jobs.length ?? 0]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new UbiError(ErrorCode.StorageFailed, "WARC worker closed with appends pending"));
    if (worker) await worker.terminate();
  }

  /** Posts the jobs queued since the last message (this event-loop turn's, or those of its wait) as one. */
  private send(): void {
    const queued = this.queued;
    this.queued = undefined;
    if (queued === undefined || queued.jobs.length === 0) return;
    if (this.failure || this.closed) {
      const error = this.failure ?? new UbiError(ErrorCode.StorageFailed, "WARC worker is closed");
      for (const job of queued.jobs) job.reject(error);
      return;
    }
    const worker = this.worker ?? this.start();
    const batch = this.nextBatch++;
    this.inFlight.set(batch, queued.jobs);
    // Only a worker with work keeps the process alive: an idle one must not hold up its exit.
    if (this.inFlight.size === 1) worker.ref();
    // The drafts are copied into the packed buffer: the caller's buffers stay its own.
    const { bytes, layout } = packDrafts(queued.drafts);
    const fds = queued.jobs.map((job) => job.fd);
    const counts = queued.jobs.map((job) => job.records);
    const newDictionaries = this.newDictionaries;
    this.newDictionaries = [];
    worker.postMessage({ batch, codec: this.codec, bytes, layout, fds, counts, newDictionaries }, [
      bytes,
      layout.buffer as ArrayBuffer,
    ]);
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on("message", (reply: WorkerReply) => this.settle(reply));
    worker.on("error", (error) => {
      this.failure = new UbiError(ErrorCode.StorageFailed, "the WARC worker failed", { cause: error });
      this.failAll(this.failure);
    });
    worker.on("exit", () => {
      if (this.closed) return;
      this.failure ??= new UbiError(ErrorCode.StorageFailed, "the WARC worker exited");
      this.worker = undefined;
      this.failAll(this.failure);
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(reply: WorkerReply): void {
    const jobs = this.inFlight.get(reply.batch);
    if (!jobs) return;
    this.inFlight.delete(reply.batch);
    if (this.inFlight.size === 0) this.worker?.unref();
    let first = 0;
    for (const job of jobs) {
      const end = first + job.records;
      if (end <= reply.sizes.length) {
        job.resolve({
          sizes: reply.sizes.slice(first, end),
          payloadDigests: reply.digests.slice(first, end),
        });
      } else {
        job.reject(appendError(reply.error ?? "no answer from the WARC worker"));
      }
      first = end;
    }
    if (this.inFlight.size === 0 && this.queued !== undefined) this.send();
  }

  private failAll(error: UbiError): void {
    const jobs = [...this.inFlight.values()].flat();
    this.inFlight.clear();
    for (const job of jobs) job.reject(error);
    // Calls gathered for the next message fail too (send refuses them once failed or closed).
    if (this.queued !== undefined) setImmediate(() => this.send());
  }
}

function appendError(cause: unknown): UbiError {
  return new UbiError(ErrorCode.StorageFailed, `cannot append WARC records: ${String(cause)}`, { cause });
}
