import type { FileHandle } from "node:fs/promises";
import { open, unlink } from "node:fs/promises";
import { ErrorCode, UbiError } from "../errors.js";
import { sortCdxjLines } from "./cdxj.js";
import { type CdxjRun, mergeCdxjRuns } from "./cdxj-runs.js";
import { cdxjPathOf, indexWarcFile, writeCdxjIndex, writeSortedCdxjIndex } from "./warc-indexer.js";

/** Options of a {@link CdxjJournal}. */
export interface CdxjJournalOptions {
  /**
   * Bytes of lines kept in memory before they are appended to the spill file.
   * @default 1048576 (1 MiB)
   */
  spillBytes?: number;
}

/**
 * The index lines of the WARC file being written, in append order, until the file is finished and
 * they are sorted into its `.cdxj`. Past `spillBytes` they wait in `<file>.cdxj.open` rather than
 * in memory (a 1 GiB WARC file of small pages has ~200,000 lines, ~50 MiB), each spill sorted (a run),
 * and the runs are merged into the index a buffer each at a time (`cdxj-runs.ts`): finishing a file
 * holds a few MiB, where reading its lines back whole held the index two or three times over (an
 * agent's peak memory came at each file's end). Nothing is synced: after a
 * crash the WARC file itself is indexed again (`indexWarcFile`), so the lines need only reach the
 * finished file's index; if writing them failed, that is how it is indexed too.
 */
export class CdxjJournal {
  private readonly spillBytes: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The spill file, once opened, the writes to it in order, and the sorted runs written to it. */
  private spill:
    | { handle: Promise<FileHandle>; writes: Promise<void>; runs: CdxjRun[]; bytes: number }
    | undefined;
  private spillFailed = false;

  /** @param warcPath the WARC file's final path (without `.open`) */
  constructor(
    private readonly warcPath: string,
    options: CdxjJournalOptions = {},
  ) {
    this.spillBytes = options.spillBytes ?? DEFAULT_SPILL_BYTES;
    if (!Number.isSafeInteger(this.spillBytes) || this.spillBytes < 1) {
      throw new UbiError(ErrorCode.InvalidArgument, "spillBytes must be a positive integer");
    }
  }

  /** Takes one index line (newline included). */
  add(line: string): void {
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= this.spillBytes) this.spillPending();
  }

  /**
   * Writes the sorted index of the WARC file, once it is finished (synced, renamed); rejects when no
   * index could be written (the next writer to open indexes the file again).
   */
  async finish(): Promise<void> {
    if (this.spill === undefined) {
      await writeCdxjIndex(this.warcPath, this.pending);
      this.pending = [];
      return;
    }
    const { handle, runs } = this.spill;
    await this.spill.writes;
    const pending = sortCdxjLines(this.pending);
    this.pending = [];
    try {
      // A spill write failed: the spill file is no whole record of the lines, the WARC file itself is
      // indexed. Else a failure rejects (the next writer to open indexes the file again).
      if (this.spillFailed) await indexWarcFile(this.warcPath);
      else await writeSortedCdxjIndex(this.warcPath, mergeCdxjRuns(await handle, runs, pending));
    } finally {
      await handle.then((file) => file.close()).catch(() => {});
      await unlink(this.spillPath).catch(() => {});
    }
  }

  /** Drops the lines and the spill file (the WARC file was not finished; it is indexed once recovered). */
  async discard(): Promise<void> {
    this.pending = [];
    if (this.spill === undefined) return;
    await this.spill.writes;
    await this.spill.handle.then((file) => file.close()).catch(() => {});
    await unlink(this.spillPath).catch(() => {});
  }

  private get spillPath(): string {
    return `${cdxjPathOf(this.warcPath)}.open`;
  }

  /** Appends the pending lines, sorted, to the spill file as one run, in the background. */
  private spillPending(): void {
    const text = sortCdxjLines(this.pending).join("");
    this.pending = [];
    this.pendingBytes = 0;
    if (this.spill === undefined) {
      // Read back by the merge: opened for both.
      const handle = open(this.spillPath, "w+");
      this.spill = { handle, writes: handle.then(() => {}), runs: [], bytes: 0 };
    }
    const spill = this.spill;
    const run = { offset: spill.bytes, length: Buffer.byteLength(text, "utf8") };
    spill.bytes += run.length;
    spill.runs.push(run);
    spill.writes = spill.writes
      .then(async () => {
        if (this.spillFailed) return;
        const { bytesWritten } = await (await spill.handle).write(text, run.offset, "utf8");
        if (bytesWritten !== run.length) throw new Error("short write");
      })
      .catch(() => {
        this.spillFailed = true;
      });
  }
}

/** Default of {@link CdxjJournalOptions.spillBytes}. */
const DEFAULT_SPILL_BYTES = 1024 * 1024;
