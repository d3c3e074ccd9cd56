import { join } from "node:path";
import type { Logger } from "../logging/index.js";
import { drainIndexLines } from "./warc-file-slot.js";
import { type ClosedWarcFile, closedWarcFile } from "./warc-folder-scan.js";
import type { LiveFile } from "./warc-live-file.js";

/**
 * The WARC writer's index lines: each response or revisit record's line, once appended, to the live
 * file's journal and to the observers (the console's replay); each finished file's index sorted and
 * written in the background, and the finished file then told of.
 */
export class WarcIndexFeed {
  private readonly observers = new Set<(line: string) => void>();
  /** Indexes of finished files being sorted and written. */
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      readonly logger: Logger;
      readonly onFileClosed: ((file: ClosedWarcFile) => void) | undefined;
    },
  ) {}

  /** Calls `observer` with each index line from now on; returns the function that stops it. */
  observe(observer: (line: string) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** Takes the index lines of `file`'s settled appends, in call order. */
  drain(file: LiveFile): void {
    drainIndexLines(file.slot, (line) => {
      file.index.add(line);
      for (const observer of this.observers) observer(line);
    });
  }

  /**
   * Sorts and writes the index of `file`, finished in `dir`, in the background (the next file need not
   * wait); a failure costs only the index, which the writer's next open writes again.
   */
  finish(file: LiveFile, dir: string): void {
    const task = file.index
      .finish()
      .then(() => this.tellClosed(closedWarcFile(join(dir, file.slot.name))))
      .catch((error: unknown) => {
        this.deps.logger.warn(
          { event: "warc-index-failed", file: file.slot.name, err: error },
          `cannot write the CDXJ index of ${file.slot.name}; it is written again when the agent next starts`,
        );
      })
      .finally(() => {
        this.writing.delete(task);
      });
    this.writing.add(task);
  }

  /** Tells the writer's `onFileClosed` of a finished, indexed file. */
  tellClosed(file: ClosedWarcFile): void {
    this.deps.onFileClosed?.(file);
  }

  /** Settles once every index being written now is written (or failed). */
  async settled(): Promise<void> {
    await Promise.all(this.writing);
  }
}
