import { type FileHandle, open, readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import { errorMessage } from "../errors.js";
import { CDXJ_SUFFIX, type CdxjEntry, cdxjEntries } from "./cdxj.js";
import { warcFileCompression } from "./warc-file-name.js";
import { zstdDecompress } from "./zstd.js";
import { readDictionaryFrame } from "./zstd-dictionary.js";

/**
 * A finished WARC file checked against its CDXJ index, as an agent does while it runs (see
 * `src/agent/warc-scrub.ts`): every record the index lists must read back whole at its offset — its
 * gzip member or Zstandard frame decompressed, checksum included — and be its URL's. The index says
 * exactly which pages the file holds, so a record gone (the file cut short or deleted) or damaged in
 * place (a bit flipped, bytes overwritten) names the page it lost, and only that page.
 */

/** {@link WarcFileCheck.problem} of a file that is gone (deleted, or moved away). */
export const GONE = "the file is gone";

/** What checking one WARC file found. */
export interface WarcFileCheck {
  /** Records its index lists (responses and revisits). */
  readonly indexed: number;
  /** The listed records that did not read back whole at their offset. */
  readonly lost: readonly CdxjEntry[];
  /** Why the first of them did not, when some did not: {@link GONE}, a short file, a bad record. */
  readonly problem: string | undefined;
}

/**
 * Checks finished WARC file `path` against its index (`<path>.cdxj`); undefined when there is no
 * index to check against (a file not finished yet, or its index gone too) or it is not whole.
 */
export async function checkWarcFile(path: string): Promise<WarcFileCheck | undefined> {
  let indexText: string;
  try {
    indexText = await readFile(path + CDXJ_SUFFIX, "utf8");
  } catch {
    return undefined;
  }
  const entries = cdxjEntries(indexText);
  if (entries === undefined) return undefined;
  const indexed = entries.length;
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return { indexed, lost: entries, problem: GONE };
  }
  try {
    const size = (await handle.stat()).size;
    const decompress = await decompressorOf(path, handle, entries, size);
    const lost: CdxjEntry[] = [];
    let problem: string | undefined;
    for (const entry of entries) {
      const trouble =
        entry.offset + entry.length > size
          ? `it is ${size} bytes long, its index reaches byte ${entry.offset + entry.length}`
          : recordTrouble(decompress(await readRange(handle, entry.offset, entry.length)), entry);
      if (trouble === undefined) continue;
      lost.push(entry);
      problem ??= trouble;
    }
    return { indexed, lost, problem };
  } finally {
    await handle.close();
  }
}

/** How a record's bytes are decompressed: gunzip, or Zstandard with the file's dictionary. */
async function decompressorOf(
  path: string,
  handle: FileHandle,
  entries: readonly CdxjEntry[],
  size: number,
): Promise<(bytes: Buffer) => Buffer | Error> {
  const attempt = (run: () => Buffer) => {
    try {
      return run();
    } catch (error) {
      return error as Error;
    }
  };
  if (warcFileCompression(path) !== "zstd") return (bytes) => attempt(() => gunzipSync(bytes));
  // The dictionary frame comes before the first record.
  const head = await readRange(handle, 0, Math.min(size, ...entries.map((entry) => entry.offset)));
  const frame = readDictionaryFrame(head);
  const dictionary = frame === undefined || frame === "short" ? undefined : frame.dictionary;
  return (bytes) => attempt(() => zstdDecompress(bytes, dictionary));
}

/** Why a decompressed record is not `entry`'s, or undefined when it is. */
function recordTrouble(record: Buffer | Error, entry: CdxjEntry): string | undefined {
  if (record instanceof Error)
    return `the record at byte ${entry.offset} does not read: ${errorMessage(record)}`;
  const headerEnd = record.indexOf("\r\n\r\n");
  const header = record.subarray(0, Math.max(headerEnd, 0)).toString("utf8");
  const uri = /\r\nWARC-Target-URI:[ \t]*<?([^\r\n>]*)>?/i.exec(header)?.[1];
  return uri === entry.url ? undefined : `the record at byte ${entry.offset} is not ${entry.url}'s`;
}

async function readRange(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, offset);
  return buffer.subarray(0, bytesRead);
}
