import { open, rename, unlink } from "node:fs/promises";
import { crc32, inflateRawSync } from "node:zlib";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { OPEN_SUFFIX, WARC_SUFFIXES, warcFileCompression } from "./warc-file-name.js";
import { ZSTD_NODE_VERSION, zstdAvailable, zstdDecompress } from "./zstd.js";
import { readDictionaryFrame } from "./zstd-dictionary.js";
import { scanZstdFrame } from "./zstd-frames.js";

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
  const scan = compression === "gzip" ? scanGzipMember : zstdScanner();
  const finalPath = openPath.slice(0, -OPEN_SUFFIX.length);
  const handle = await open(openPath, "r+");
  let kept = 0;
  let records = 0;
  let size = 0;
  /** Where the last kept record starts when it is a request (its response not kept yet). */
  let lastRequestAt: number | undefined;
  try {
    size = (await handle.stat()).size;
    let window = Buffer.alloc(0);
    let windowStart = 0;
    let windowBytes = FIRST_WINDOW_BYTES;
    while (kept < size) {
      const local = kept - windowStart;
      const scanned = scan(window.subarray(local), kept === 0);
      if (scanned.kind === "ok") {
        kept += scanned.length;
        if (scanned.record === undefined) continue;
        lastRequestAt = isRequestRecord(scanned.record) ? kept - scanned.length : undefined;
        records++;
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

/** True when the WARC record in `content` is a `request` record. */
function isRequestRecord(content: Buffer): boolean {
  const headerEnd = content.indexOf("\r\n\r\n");
  return /\r\nwarc-type:[ \t]*request[ \t]*\r\n/i.test(content.toString("latin1", 0, headerEnd + 2));
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
