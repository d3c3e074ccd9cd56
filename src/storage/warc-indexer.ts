import { open, readFile, rename, stat, unlink } from "node:fs/promises";
import { basename } from "node:path";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { CDXJ_SUFFIX, cdxjExtent, cdxjLine, sortCdxjLines } from "./cdxj.js";
import { warcFileCompression } from "./warc-file-name.js";
import { walkWarcMembers } from "./warc-members.js";

/**
 * A WARC file's CDXJ index (`<file>.cdxj`, see `cdxj.ts`) written whole or not at all, and built again
 * from the WARC file itself when it is missing or does not reach the file's end.
 */

/** Suffix of an index being written, before its rename to `<file>.cdxj`. */
const WRITING_SUFFIX = ".tmp";

/** The index of the WARC file at `warcPath`. */
export function cdxjPathOf(warcPath: string): string {
  return warcPath + CDXJ_SUFFIX;
}

/**
 * The WARC file name an index file being written belongs to (`<file>.cdxj.tmp`, or `<file>.cdxj.open`
 * of a live file's journal: both left only by a crash), else undefined.
 */
export function unfinishedIndexOf(name: string): string | undefined {
  for (const suffix of [CDXJ_SUFFIX + WRITING_SUFFIX, `${CDXJ_SUFFIX}.open`]) {
    if (name.endsWith(suffix)) return name.slice(0, -suffix.length);
  }
  return undefined;
}

/**
 * Writes `lines` (each ending in a newline), sorted, as the index of `warcPath` (at `indexPath`, beside
 * it by default): into a temporary file, synced, then renamed over the index, so a crash leaves the old
 * index or none, never part of one.
 */
export async function writeCdxjIndex(
  warcPath: string,
  lines: string[],
  indexPath = cdxjPathOf(warcPath),
): Promise<void> {
  await writeSortedCdxjIndex(warcPath, sortCdxjLines(lines), indexPath);
}

/**
 * Writes `sorted` (lines in the order of `sortCdxjLines`, each ending in a newline; a line equal to the
 * one before it is dropped) as the index of `warcPath`, whole or not at all, as {@link writeCdxjIndex}.
 */
export async function writeSortedCdxjIndex(
  warcPath: string,
  sorted: Iterable<string> | AsyncIterable<string>,
  indexPath = cdxjPathOf(warcPath),
): Promise<void> {
  const writingPath = indexPath + WRITING_SUFFIX;
  const handle = await open(writingPath, "w");
  try {
    // In slices, so a large index is never one string twice its size.
    let slice: string[] = [];
    let last: string | undefined;
    for await (const line of sorted) {
      if (line === last) continue;
      last = line;
      slice.push(line);
      if (slice.length === WRITE_SLICE_LINES) {
        await handle.write(slice.join(""));
        slice = [];
      }
    }
    if (slice.length > 0) await handle.write(slice.join(""));
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(writingPath).catch(() => {});
    throw error;
  }
  await handle.close();
  await rename(writingPath, indexPath);
}

/** Lines joined per write by {@link writeCdxjIndex}. */
const WRITE_SLICE_LINES = 4096;

/**
 * True when `warcPath` has an index (at `indexPath`, beside it by default) whose every line is whole and
 * which points to the file's last byte (a WARC file ends with a response or revisit record, which its
 * index holds).
 */
export async function indexCoversFile(warcPath: string, indexPath = cdxjPathOf(warcPath)): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(indexPath, "utf8");
  } catch {
    return false;
  }
  return cdxjExtent(text) === (await stat(warcPath)).size;
}

/**
 * Indexes the finished WARC file at `warcPath` from its records (each `response` and `revisit` at its
 * member's offset and length) and writes the index (at `indexPath`, beside the file by default);
 * returns its number of lines. A finished file holds
 * only whole members, unless it was damaged since (cut short on disk): the index then ends at the
 * first torn or damaged member, whose records are lost — the agent's check of its WARC files against
 * its state (`warc-ledger.ts`) cuts the torn end and fetches their pages again. Throws `StorageFailed`
 * when the file cannot be read.
 */
export async function indexWarcFile(warcPath: string, indexPath = cdxjPathOf(warcPath)): Promise<number> {
  const compression = warcFileCompression(warcPath);
  if (compression === undefined)
    throw new UbiError(ErrorCode.InvalidArgument, `not a WARC file: ${warcPath}`);
  const filename = basename(warcPath);
  const lines: string[] = [];
  const handle = await open(warcPath, "r");
  try {
    const size = (await handle.stat()).size;
    const members = walkWarcMembers(handle, size, compression);
    for (let next = await members.next(); ; next = await members.next()) {
      if (next.done) break;
      const { offset, length, record } = next.value;
      const line = record && indexLineOf(record, { offset, length, filename });
      if (line) lines.push(line);
    }
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot index ${warcPath}: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    await handle.close();
  }
  await writeCdxjIndex(warcPath, lines, indexPath);
  return lines.length;
}

/** The index line of a decompressed record, or undefined for a record type the index leaves out. */
function indexLineOf(
  record: Buffer,
  where: { offset: number; length: number; filename: string },
): string | undefined {
  const headEnd = record.indexOf("\r\n\r\n");
  const fields = new Map<string, string>();
  for (const line of record.toString("utf8", 0, headEnd).split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const type = fields.get("warc-type");
  if (type !== "response" && type !== "revisit") return undefined;
  const blockStart = headEnd + 4;
  const httpEnd = record.indexOf("\r\n\r\n", blockStart);
  const digest = fields.get("warc-payload-digest") ?? "";
  return cdxjLine({
    url: fields.get("warc-target-uri") ?? "",
    date: new Date(fields.get("warc-date") ?? 0),
    revisit: type === "revisit",
    httpHeaderBlock: record.toString("latin1", blockStart, httpEnd < 0 ? record.length : httpEnd + 4),
    digest: digest.slice(digest.indexOf(":") + 1),
    ...where,
  });
}
