import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ErrorCode, UbiError } from "../errors.js";
import { FINISH_SOURCE, packDrafts, type RecordDraft } from "./warc-draft.js";

/**
 * Finishing and gzip of WARC records, one gzip member each. Compressing a 17 KiB page costs ~0.15 ms of
 * CPU even at level 1, the largest single cost of a fetch, so by default it runs "on the side": in a
 * worker thread, together with the records' SHA-1 digests, which leaves the crawler's main thread to
 * fetch and parse while a second core finishes records. Synchronous `gzipSync` in either thread,
 * because zlib's async API costs ~150 µs of CPU a call in stream and thread-pool overhead, more than the
 * compression itself.
 */
export interface GzipMembers {
  /** The gzip members of `drafts`, finished (digests filled in), in order. */
  compress(drafts: readonly RecordDraft[]): Buffer[] | Promise<Buffer[]>;
  /** Stops the worker, if any; pending calls reject. Idempotent. */
  close(): Promise<void>;
}

type FinishRecords = (bytes: Uint8Array, layout: Int32Array, level: number) => Buffer[];

/** The same finishing code the worker runs, compiled once for this thread. */
let inlineFinish: FinishRecords | undefined;

function finishInline(): FinishRecords {
  // Built from the worker's source so both paths write identical records.
  inlineFinish ??= new Function("require", `${FINISH_SOURCE}\nreturn finishRecords;`)(
    createRequire(import.meta.url),
  ) as FinishRecords;
  return inlineFinish;
}

/** Finishes and compresses on the calling thread. */
export class InlineGzip implements GzipMembers {
  constructor(private readonly level: number) {}

  compress(drafts: readonly RecordDraft[]): Buffer[] {
    const { bytes, layout } = packDrafts(drafts);
    return finishInline()(new Uint8Array(bytes), layout, this.level);
  }

  async close(): Promise<void> {}
}

// The worker is inline JavaScript (eval), so it runs the same from compiled dist/ and from TypeScript
// sources under test. A message carries every draft queued during one event-loop turn, packed back to
// back in one transferred buffer, and so does the answer: cloning costs far more than a transfer, and
// each message wakes the other thread.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
${FINISH_SOURCE}
parentPort.on("message", ({ batch, level, bytes, layout }) => {
  try {
    const members = finishRecords(new Uint8Array(bytes), layout, level);
    let total = 0;
    for (const member of members) total += member.length;
    const out = Buffer.allocUnsafeSlow(total);
    let offset = 0;
    for (const member of members) {
      out.set(member, offset);
      offset += member.length;
    }
    parentPort.postMessage({ batch, bytes: out, lengths: members.map((member) => member.length) }, [out.buffer]);
  } catch (error) {
    parentPort.postMessage({ batch, error: String(error) });
  }
});
`;

interface WorkerReply {
  batch: number;
  bytes?: Uint8Array;
  lengths?: number[];
  error?: string;
}

/** One `compress` call waiting for its members. */
interface Job {
  records: number;
  resolve: (members: Buffer[]) => void;
  reject: (error: Error) => void;
}

/** Compresses in one worker thread; batches are answered in the order they were sent. */
export class WorkerGzip implements GzipMembers {
  private worker: Worker | undefined;
  /** Jobs of the current event-loop turn, sent together by {@link send}. */
  private queued: { jobs: Job[]; drafts: RecordDraft[] } | undefined;
  private readonly inFlight = new Map<number, Job[]>();
  private nextBatch = 1;
  private failure: UbiError | undefined;
  private closed = false;

  constructor(private readonly level: number) {}

  compress(drafts: readonly RecordDraft[]): Promise<Buffer[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new UbiError(ErrorCode.StorageFailed, "gzip worker is closed"));
    if (this.queued === undefined) {
      this.queued = { jobs: [], drafts: [] };
      setImmediate(() => this.send());
    }
    const queued = this.queued;
    for (const draft of drafts) queued.drafts.push(draft);
    return new Promise<Buffer[]>((resolve, reject) => {
      queued.jobs.push({ records: drafts.length, resolve, reject });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new UbiError(ErrorCode.StorageFailed, "gzip worker closed with jobs pending"));
    if (worker) await worker.terminate();
  }

  /** Posts the jobs queued during this event-loop turn as one message. */
  private send(): void {
    const queued = this.queued;
    this.queued = undefined;
    if (queued === undefined || queued.jobs.length === 0) return;
    if (this.failure || this.closed) {
      const error = this.failure ?? new UbiError(ErrorCode.StorageFailed, "gzip worker is closed");
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
    worker.postMessage({ batch, level: this.level, bytes, layout }, [bytes, layout.buffer as ArrayBuffer]);
  }

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on("message", (reply: WorkerReply) => this.settle(reply));
    worker.on("error", (error) => {
      this.failure = new UbiError(ErrorCode.StorageFailed, "the gzip worker failed", { cause: error });
      this.failAll(this.failure);
    });
    worker.on("exit", () => {
      if (this.closed) return;
      this.failure ??= new UbiError(ErrorCode.StorageFailed, "the gzip worker exited");
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
    const { bytes, lengths } = reply;
    if (reply.error !== undefined || bytes === undefined || lengths === undefined) {
      const error = new UbiError(ErrorCode.StorageFailed, `gzip failed: ${reply.error ?? "no output"}`);
      for (const job of jobs) job.reject(error);
      return;
    }
    let member = 0;
    let offset = 0;
    for (const job of jobs) {
      const members: Buffer[] = [];
      for (let i = 0; i < job.records; i++, member++) {
        const length = lengths[member] as number;
        members.push(Buffer.from(bytes.buffer, bytes.byteOffset + offset, length));
        offset += length;
      }
      job.resolve(members);
    }
  }

  private failAll(error: UbiError): void {
    const jobs = [...this.inFlight.values()].flat();
    this.inFlight.clear();
    for (const job of jobs) job.reject(error);
  }
}
