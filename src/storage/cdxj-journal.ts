import type { FileHandle } from "node:fs/promises";
import { open, readFile, unlink } from "node:fs/promises";
import { ErrorCode, UbiError } from "../errors.js";
import { cdxjPathOf, indexWarcFile, writeCdxjIndex } from "./warc-indexer.js";

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
 * in memory (a 1 GiB WARC file of small pages has ~200,000 lines, ~50 MiB). Nothing is synced: after a
 * crash the WARC file itself is indexed again (`indexWarcFile`), so the lines need only reach the
 * finished file's index; if writing them failed, that is how it is indexed too.
 */
export class CdxjJournal {
  private readonly spillBytes: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The spill file, once opened, and the writes to it in order. */
  private spill: { handle: Promise<FileHandle>; writes: Promise<void> } | undefined;
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
    const spilled = await this.closeSpill();
    if (spilled === undefined) {
      await indexWarcFile(this.warcPath);
    } else {
      const lines = spilled.split(/(?<=\n)/);
      for (const line of this.pending) lines.push(line);
      this.pending = [];
      await writeCdxjIndex(this.warcPath, lines);
    }
    await unlink(this.spillPath).catch(() => {});
  }

  /** Drops the lines and the spill file (the WARC file was not finished; it is indexed once recovered). */
  async discard(): Promise<void> {
    this.pending = [];
    if (this.spill === undefined) return;
    await this.closeSpill();
    await unlink(this.spillPath).catch(() => {});
  }

  private get spillPath(): string {
    return `${cdxjPathOf(this.warcPath)}.open`;
  }

  /** Appends the pending lines to the spill file, in the background. */
  private spillPending(): void {
    const text = this.pending.join("");
    this.pending = [];
    this.pendingBytes = 0;
    if (this.spill === undefined) {
      const handle = open(this.spillPath, "w");
      this.spill = { handle, writes: handle.then(() => {}) };
    }
    const { handle } = this.spill;
    this.spill.writes = this.spill.writes
      .then(async () => {
        if (this.spillFailed) return;
        await (await handle).write(text);
      })
      .catch(() => {
        this.spillFailed = true;
      });
  }

  /** Waits for the spill writes, closes the file; its text, or undefined when a write failed. */
  private async closeSpill(): Promise<string | undefined> {
    const spill = this.spill;
    if (spill === undefined) return "";
    await spill.writes;
    await spill.handle.then((handle) => handle.close()).catch(() => {});
    if (this.spillFailed) return undefined;
    try {
      return await readFile(this.spillPath, "utf8");
    } catch {
      return undefined;
    }
  }
}

/** Default of {@link CdxjJournalOptions.spillBytes}. */
const DEFAULT_SPILL_BYTES = 1024 * 1024;
