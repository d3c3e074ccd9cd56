import { open, rename, unlink } from "node:fs/promises";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { OPEN_SUFFIX, WARC_SUFFIXES, warcFileCompression } from "./warc-file-name.js";
import { walkWarcMembers } from "./warc-members.js";
import { ZSTD_NODE_VERSION, zstdAvailable } from "./zstd.js";

/**
 * Crash recovery of a WARC file that was still open (`.warc.gz.open`, `.warc.zst.open`): walk its
 * gzip members or Zstandard frames, keep the longest prefix of complete ones that each hold one
 * complete WARC record, cut the torn rest, and rename the file without `.open`. Writes are
 * append-only, so damage can only be at the tail. A fetch is written as a request record directly
 * followed by its response: a request left last, its response torn, is cut too, so every kept request
 * has its partner. A `.warc.zst` file starts with its dictionary frame, which every frame needs.
 */

/** What {@link recoverWarcFile} kept and dropped. */
export interface WarcRecoveryResult {
  /** The final path (`.warc.gz`), or undefined when nothing intact was left and the file was removed. */
  path: string | undefined;
  /** Intact records kept. */
  records: number;
  /** Bytes kept. */
  keptBytes: number;
  /** Bytes cut from the tail. */
  droppedBytes: number;
}

/**
 * Repairs `openPath` (a `*.warc.gz.open` or `*.warc.zst.open` file) in place and renames it without
 * `.open`. The scan decompresses synchronously: it runs once at startup, on at most one file per writer.
 */
export async function recoverWarcFile(openPath: string): Promise<WarcRecoveryResult> {
  const compression = warcFileCompression(openPath);
  if (!openPath.endsWith(OPEN_SUFFIX) || compression === undefined) {
    throw new UbiError(ErrorCode.InvalidArgument, `not an open WARC file: ${openPath}`);
  }
  if (compression === "zstd" && !zstdAvailable()) {
    throw new UbiError(
      ErrorCode.StorageFailed,
      `cannot recover ${openPath}: reading ${WARC_SUFFIXES.zstd} files needs Node.js ${ZSTD_NODE_VERSION} or later (this is ${process.version})`,
    );
  }
  const finalPath = openPath.slice(0, -OPEN_SUFFIX.length);
  const handle = await open(openPath, "r+");
  let kept = 0;
  let records = 0;
  let size = 0;
  /** Where the last kept record starts when it is a request (its response not kept yet). */
  let lastRequestAt: number | undefined;
  try {
    size = (await handle.stat()).size;
    const members = walkWarcMembers(handle, size, compression);
    for (let next = await members.next(); ; next = await members.next()) {
      if (next.done) {
        kept = next.value;
        break;
      }
      const { offset, record } = next.value;
      if (record === undefined) continue;
      lastRequestAt = isRequestRecord(record) ? offset : undefined;
      records++;
    }
    if (lastRequestAt !== undefined) {
      kept = lastRequestAt;
      records--;
    }
    if (kept < size) {
      await handle.truncate(kept);
      await handle.sync();
    }
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot recover ${openPath}: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    await handle.close();
  }
  if (records === 0) {
    await unlink(openPath);
    return { path: undefined, records: 0, keptBytes: 0, droppedBytes: size };
  }
  await rename(openPath, finalPath);
  return { path: finalPath, records, keptBytes: kept, droppedBytes: size - kept };
}

/** True when the WARC record in `content` is a `request` record. */
function isRequestRecord(content: Buffer): boolean {
  const headerEnd = content.indexOf("\r\n\r\n");
  return /\r\nwarc-type:[ \t]*request[ \t]*\r\n/i.test(content.toString("latin1", 0, headerEnd + 2));
}
