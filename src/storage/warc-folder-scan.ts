import { readdir, unlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { OPEN_SUFFIX, warcFileSerial } from "./warc-file-name.js";
import { cdxjPathOf, indexCoversFile, indexWarcFile, unfinishedIndexOf } from "./warc-indexer.js";
import { recoverWarcFile } from "./warc-recovery.js";

/**
 * What the WARC writer does with its folder at open: the files a crash left behind made whole again
 * (`.open` files repaired and renamed, indexes missing or short written again, unfinished indexes
 * removed), and the serial its next file takes.
 */

/** A finished WARC file with its index. */
export interface ClosedWarcFile {
  /** Its name. */
  readonly name: string;
  /** Its path. */
  readonly path: string;
  /** Its CDXJ index's path. */
  readonly indexPath: string;
}

/** Whose files a scan takes up: an agent's, by the files' names. */
export interface WarcFolderOwner {
  readonly dir: string;
  readonly filePrefix: string;
  readonly agentId: string;
}

/** What a scan did, as {@link scanWarcFolder} counts it while it runs. */
export interface WarcFolderScanCounts {
  /** Leftover `.open` files repaired. */
  recoveredFiles: number;
  /** Finished files whose index was missing or fell short of their end, indexed again. */
  reindexedFiles: number;
}

/** The finished file at `path`, with its index's path. */
export function closedWarcFile(path: string): ClosedWarcFile {
  return { name: basename(path), path, indexPath: cdxjPathOf(path) };
}

/**
 * Removes `owner`'s unfinished indexes, repairs and renames its `.open` files, indexes again its files
 * whose index is missing or short (counting both in `counts`), and tells `onFinished` of each of its
 * finished files, indexed; returns the serial of its next file.
 */
export async function scanWarcFolder(
  owner: WarcFolderOwner,
  counts: WarcFolderScanCounts,
  onFinished: (file: ClosedWarcFile) => void,
): Promise<number> {
  let maxSerial = 0;
  const finished: string[] = [];
  for (const entry of await readdir(owner.dir)) {
    const indexed = unfinishedIndexOf(entry);
    if (indexed !== undefined) {
      if (warcFileSerial(indexed, owner.filePrefix, owner.agentId) !== undefined) {
        await unlink(join(owner.dir, entry));
      }
      continue;
    }
    const serial = warcFileSerial(entry, owner.filePrefix, owner.agentId);
    if (serial === undefined) continue;
    maxSerial = Math.max(maxSerial, serial);
    if (entry.endsWith(OPEN_SUFFIX)) {
      const { path } = await recoverWarcFile(join(owner.dir, entry));
      counts.recoveredFiles++;
      if (path !== undefined) finished.push(path);
    } else {
      finished.push(join(owner.dir, entry));
    }
  }
  for (const path of finished) {
    if (!(await indexCoversFile(path))) {
      await indexWarcFile(path);
      counts.reindexedFiles++;
    }
    onFinished(closedWarcFile(path));
  }
  return maxSerial + 1;
}
