import { ZSTD_FRAME_MAGIC } from "./zstd.js";

/**
 * Where a Zstandard frame ends, read from its headers alone (RFC 8878 section 3.1): the frame header,
 * then each block's 3-byte header giving its size, then the optional checksum. Crash recovery walks a
 * `.warc.zst` file with it, frame by frame, before decompressing each one to check it.
 */

/** What starts a buffer: a whole frame, a skippable frame, one cut short, or bytes that are not a frame. */
export type ZstdFrameScan =
  | { readonly kind: "frame"; readonly length: number }
  | { readonly kind: "skippable"; readonly length: number; readonly magic: number }
  | { readonly kind: "short" }
  | { readonly kind: "bad" };

/** Skippable frames have magics 0x184D2A50…0x184D2A5F. */
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_BASE = 0x184d2a50;
const DICTIONARY_ID_BYTES = [0, 1, 2, 4] as const;
const CONTENT_SIZE_BYTES = [0, 2, 4, 8] as const;
const BLOCK_HEADER_BYTES = 3;
const CHECKSUM_BYTES = 4;
const BLOCK_RLE = 1;
const BLOCK_RESERVED = 3;

/** Scans the frame at the start of `buf` (see {@link ZstdFrameScan}). */
export function scanZstdFrame(buf: Buffer): ZstdFrameScan {
  if (buf.length < 4) return { kind: "short" };
  const magic = buf.readUInt32LE(0);
  if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_BASE) {
    if (buf.length < 8) return { kind: "short" };
    const length = 8 + buf.readUInt32LE(4);
    return buf.length < length ? { kind: "short" } : { kind: "skippable", length, magic };
  }
  if (magic !== ZSTD_FRAME_MAGIC) return { kind: "bad" };
  if (buf.length < 5) return { kind: "short" };
  const descriptor = buf[4] as number;
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  if ((descriptor >> 3) & 1) return { kind: "bad" }; // the reserved bit
  const hasChecksum = (descriptor >> 2) & 1;
  let pos =
    5 +
    (singleSegment ? 0 : 1) +
    DICTIONARY_ID_BYTES[descriptor & 3] +
    (contentSizeFlag === 0 ? singleSegment : CONTENT_SIZE_BYTES[contentSizeFlag]);
  for (;;) {
    if (buf.length < pos + BLOCK_HEADER_BYTES) return { kind: "short" };
    const header = (buf[pos] as number) | ((buf[pos + 1] as number) << 8) | ((buf[pos + 2] as number) << 16);
    const type = (header >> 1) & 3;
    if (type === BLOCK_RESERVED) return { kind: "bad" };
    pos += BLOCK_HEADER_BYTES + (type === BLOCK_RLE ? 1 : header >>> 3);
    if (buf.length < pos) return { kind: "short" };
    if (header & 1) break;
  }
  if (hasChecksum) pos += CHECKSUM_BYTES;
  return buf.length < pos ? { kind: "short" } : { kind: "frame", length: pos };
}
