import type { FileHandle } from "node:fs/promises";
import { crc32, inflateRawSync } from "node:zlib";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import type { WarcCompression } from "./warc-file-name.js";
import { zstdDecompress } from "./zstd.js";
import { readDictionaryFrame } from "./zstd-dictionary.js";
import { scanZstdFrame } from "./zstd-frames.js";

/**
 * Walking a WARC file member by member (gzip members, or Zstandard frames after the dictionary frame),
 * each checked whole and holding one complete WARC record, with where it lies in the file: what crash
 * recovery keeps (`warc-recovery.ts`) and what re-indexing reads (`warc-indexer.ts`). Decompressed
 * synchronously: it runs at startup, or off the crawl's hot path.
 */

/** One whole member or frame of a WARC file. */
export interface WarcMember {
  /** Byte offset of the member in the file. */
  readonly offset: number;
  /** Its compressed length in bytes. */
  readonly length: number;
  /** The WARC record it holds, decompressed; undefined for a dictionary or skippable frame. */
  readonly record?: Buffer;
}

const FIRST_WINDOW_BYTES = 4 * 1024 * 1024;
const GZIP_TRAILER_BYTES = 8;
const FLAG_HCRC = 2;
const FLAG_EXTRA = 4;
const FLAG_NAME = 8;
const FLAG_COMMENT = 16;

/**
 * A member or frame parsed at the start of a buffer, with the record it holds (none for a dictionary or
 * extension frame), or why it could not be.
 */
type MemberScan = { kind: "ok"; length: number; record?: Buffer } | { kind: "short" } | { kind: "bad" };

/** Scans the member or frame at `buf`, the file's start when `atStart`. */
type Scanner = (buf: Buffer, atStart: boolean) => MemberScan;

/**
 * Yields the whole members of the `size` first bytes of `handle`, in order, and returns where their run
 * ends: the file's size when every member is whole, else the offset of the first torn or damaged one.
 * Throws (`StorageFailed`) for a `.warc.zst` file whose first record its own dictionary cannot read.
 */
export async function* walkWarcMembers(
  handle: FileHandle,
  size: number,
  compression: WarcCompression,
): AsyncGenerator<WarcMember, number> {
  const scan = compression === "gzip" ? scanGzipMember : zstdScanner();
  let kept = 0;
  let window = Buffer.alloc(0);
  let windowStart = 0;
  let windowBytes = FIRST_WINDOW_BYTES;
  while (kept < size) {
    const local = kept - windowStart;
    const scanned = scan(window.subarray(local), kept === 0);
    if (scanned.kind === "ok") {
      yield scanned.record === undefined
        ? { offset: kept, length: scanned.length }
        : { offset: kept, length: scanned.length, record: scanned.record };
      kept += scanned.length;
      continue;
    }
    const windowReachesEnd = windowStart + window.length >= size;
    if (scanned.kind === "bad" || (local === 0 && windowReachesEnd && window.length > 0)) break;
    // The member runs past the buffer: reload from it, with a larger window if it already started there.
    if (local === 0 && window.length > 0) windowBytes *= 2;
    windowStart = kept;
    window = Buffer.alloc(Math.min(windowBytes, size - kept));
    const { bytesRead } = await handle.read(window, 0, window.length, windowStart);
    window = window.subarray(0, bytesRead);
  }
  return kept;
}

/** Checks the gzip member at the start of `buf`: header, deflate stream, CRC-32, size, WARC record. */
function scanGzipMember(buf: Buffer): MemberScan {
  if (buf.length < 10) return { kind: "short" };
  if (buf[0] !== 0x1f || buf[1] !== 0x8b || buf[2] !== 8) return { kind: "bad" };
  const flags = buf[3] as number;
  let pos = 10;
  if (flags & FLAG_EXTRA) {
    if (buf.length < pos + 2) return { kind: "short" };
    pos += 2 + buf.readUInt16LE(pos);
  }
  for (const flag of [FLAG_NAME, FLAG_COMMENT]) {
    if (flags & flag) {
      const end = buf.indexOf(0, pos);
      if (end < 0) return { kind: "short" };
      pos = end + 1;
    }
  }
  if (flags & FLAG_HCRC) pos += 2;
  if (buf.length <= pos) return { kind: "short" };
  let content: Buffer;
  let consumed: number;
  try {
    const result = inflateRawSync(buf.subarray(pos), { info: true }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    content = result.buffer;
    consumed = result.engine.bytesWritten;
  } catch (error) {
    // Z_BUF_ERROR: the stream is cut short; anything else: corrupt data.
    return (error as { code?: string }).code === "Z_BUF_ERROR" ? { kind: "short" } : { kind: "bad" };
  }
  const trailer = pos + consumed;
  if (buf.length < trailer + GZIP_TRAILER_BYTES) return { kind: "short" };
  if (
    buf.readUInt32LE(trailer) !== crc32(content) ||
    buf.readUInt32LE(trailer + 4) !== content.length >>> 0
  ) {
    return { kind: "bad" };
  }
  if (!isCompleteWarcRecord(content)) return { kind: "bad" };
  return { kind: "ok", length: trailer + GZIP_TRAILER_BYTES, record: content };
}

/**
 * Checks Zstandard frames: the dictionary frame at the start (if any), then each frame's extent, its
 * decompression with that dictionary (which checks its checksum), and the WARC record it holds.
 * Extension frames (other skippable frames) are kept and hold no record.
 */
function zstdScanner(): Scanner {
  let dictionary: Buffer | undefined;
  let readOne = false;
  return (buf, atStart) => {
    if (atStart) {
      let frame: ReturnType<typeof readDictionaryFrame>;
      try {
        frame = readDictionaryFrame(buf);
      } catch {
        return { kind: "bad" };
      }
      if (frame === "short") return { kind: "short" };
      if (frame !== undefined) {
        dictionary = frame.dictionary;
        return { kind: "ok", length: frame.length };
      }
    }
    const scanned = scanZstdFrame(buf);
    if (scanned.kind === "skippable") return { kind: "ok", length: scanned.length };
    if (scanned.kind !== "frame") return scanned;
    let content: Buffer;
    try {
      content = zstdDecompress(buf.subarray(0, scanned.length), dictionary);
    } catch (error) {
      // A whole first frame that its own file's dictionary cannot read is not a torn tail: cutting it
      // would delete the file. Left as it is, for a person to look at.
      if (!readOne && dictionary !== undefined) {
        throw new UbiError(
          ErrorCode.StorageFailed,
          `its first record does not decompress with its dictionary (${errorMessage(error)}); the file is left as it is`,
          { cause: error },
        );
      }
      return { kind: "bad" };
    }
    readOne = true;
    return isCompleteWarcRecord(content)
      ? { kind: "ok", length: scanned.length, record: content }
      : { kind: "bad" };
  };
}

/** True when `content` is exactly one WARC record whose block matches its Content-Length. */
function isCompleteWarcRecord(content: Buffer): boolean {
  if (!content.subarray(0, 7).equals(Buffer.from("WARC/1."))) return false;
  const headerEnd = content.indexOf("\r\n\r\n");
  if (headerEnd < 0) return false;
  const match = /\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n/i.exec(
    content.toString("latin1", 0, headerEnd + 2),
  );
  if (!match) return false;
  const expected = headerEnd + 4 + Number(match[1]) + 4;
  return content.length === expected && content.toString("latin1", expected - 4) === "\r\n\r\n";
}
