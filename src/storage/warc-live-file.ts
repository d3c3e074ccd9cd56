import { type FileHandle, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { CdxjJournal } from "./cdxj-journal.js";
import { OPEN_SUFFIX } from "./warc-file-name.js";
import type { FileSlot } from "./warc-file-slot.js";
import { dictionaryFrame } from "./zstd-dictionary.js";

/** The WARC file being written: created `.open` beside its index journal, with its dictionary first. */

/** The file being written: its slot, handle, the length of its whole records, its index lines. */
export interface LiveFile {
  slot: FileSlot;
  handle: FileHandle;
  /** What a failed write cuts the file back to; the offset of the next record. */
  goodBytes: number;
  index: CdxjJournal;
}

/**
 * Creates `slot`'s file in `dir`, named with `.open`, and writes the dictionary frame of a `.warc.zst`
 * file first (every record's frame needs it); a file the frame could not be written to is removed (it
 * holds nothing yet) and the error thrown.
 */
export async function createLiveFile(dir: string, slot: FileSlot): Promise<LiveFile> {
  // "ax": append-only, and never reuse a name that already exists.
  const path = join(dir, slot.name + OPEN_SUFFIX);
  const handle = await open(path, "ax");
  let goodBytes = 0;
  if (slot.dictionary) {
    const frame = dictionaryFrame(slot.dictionary);
    try {
      const { bytesWritten } = await handle.write(frame, 0, frame.length);
      if (bytesWritten !== frame.length) throw new Error(`short write: ${bytesWritten} of ${frame.length}`);
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(path).catch(() => {});
      throw error;
    }
    goodBytes = frame.length;
  }
  return { slot, handle, goodBytes, index: new CdxjJournal(join(dir, slot.name)) };
}
