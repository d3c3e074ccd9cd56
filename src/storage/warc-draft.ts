/**
 * WARC records as drafts: the head text with placeholder digest values and the block in pieces. The
 * crawler's thread only packs drafts into one buffer (a single copy); the compressor finishes them in
 * place (SHA-1 digests written into their slots) and gzips each record straight from that buffer, so
 * digests, concatenation and compression all run off the crawler's thread when a worker compresses.
 */

/** A WARC record to finish: its head (digest values still placeholders) and its block in pieces. */
export interface RecordDraft {
  /** Version line and named fields through the blank line; UTF-8. */
  readonly head: string;
  /** The block, in order; a string piece is one byte per char (latin1), as HTTP header blocks are. */
  readonly block: readonly (Uint8Array | string)[];
  /** Index in `block` of the first payload piece (`WARC-Payload-Digest`); `block.length` for none. */
  readonly payloadFrom: number;
  /** Byte offset in `head` of the 32-character `WARC-Block-Digest` value, or -1 without one. */
  readonly blockDigestAt: number;
  /** Byte offset in `head` of the 32-character `WARC-Payload-Digest` value, or -1 without one. */
  readonly payloadDigestAt: number;
}

/** Drafts packed back to back in one transferable buffer, with where each record's parts lie. */
export interface PackedDrafts {
  /** Every record's bytes (head, block, CRLF CRLF), back to back; a plain, non-pooled ArrayBuffer. */
  readonly bytes: ArrayBuffer;
  /** {@link LAYOUT_FIELDS} integers per record (see {@link packDrafts}). */
  readonly layout: Int32Array;
}

/** Placeholder of a digest value: as long as `base32(sha1)` (32 characters), overwritten in place. */
export const DIGEST_PLACEHOLDER = "================================";

/** Integers per record in {@link PackedDrafts.layout}. */
export const LAYOUT_FIELDS = 7;

const RECORD_END = "\r\n\r\n";

/**
 * Packs drafts into one buffer. Layout per record, offsets relative to the record's start: length,
 * block start, block end, block digest slot, payload start, payload end, payload digest slot (-1: none).
 */
export function packDrafts(drafts: readonly RecordDraft[]): PackedDrafts {
  const layout = new Int32Array(drafts.length * LAYOUT_FIELDS);
  let total = 0;
  for (let i = 0; i < drafts.length; i++) {
    const draft = drafts[i] as RecordDraft;
    const headBytes = Buffer.byteLength(draft.head, "utf8");
    let blockBytes = 0;
    let payloadStart = -1;
    for (let p = 0; p < draft.block.length; p++) {
      if (p === draft.payloadFrom) payloadStart = headBytes + blockBytes;
      const piece = draft.block[p] as Uint8Array | string;
      blockBytes += typeof piece === "string" ? piece.length : piece.byteLength;
    }
    const blockEnd = headBytes + blockBytes;
    const base = i * LAYOUT_FIELDS;
    layout[base] = blockEnd + RECORD_END.length;
    layout[base + 1] = headBytes;
    layout[base + 2] = blockEnd;
    layout[base + 3] = draft.blockDigestAt;
    layout[base + 4] = payloadStart === -1 ? blockEnd : payloadStart;
    layout[base + 5] = blockEnd;
    layout[base + 6] = draft.payloadDigestAt;
    total += blockEnd + RECORD_END.length;
  }
  // allocUnsafeSlow: never pooled, so its whole ArrayBuffer is this record set and can be transferred.
  const bytes = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  for (const draft of drafts) {
    offset += bytes.write(draft.head, offset, "utf8");
    for (const piece of draft.block) {
      if (typeof piece === "string") {
        offset += bytes.write(piece, offset, "latin1");
      } else {
        bytes.set(piece, offset);
        offset += piece.byteLength;
      }
    }
    offset += bytes.write(RECORD_END, offset, "latin1");
  }
  return { bytes: bytes.buffer as ArrayBuffer, layout };
}

/**
 * The finishing step as JavaScript source, shared by the worker thread (which evaluates it) and the
 * inline compressor, so both write the same bytes: `finishRecords(bytes, layout, codec, dictionaries)`
 * fills each record's digest slots with `base32(sha1)` and returns one compressed unit per record: a
 * gzip member (`codec.kind` "gzip"), or a Zstandard frame with its content size and checksum, using
 * `dictionaries[i]` for record i when given ("zstd"). `codec.level` is the compression level.
 * `payloadDigests(bytes, layout)`, once they are finished, reads back each record's payload digest
 * filled in there (base32, for the record's index line), or null for a record whose draft carried its own.
 */
export const FINISH_SOURCE = `
const crypto = require("node:crypto");
const zlib = require("node:zlib");
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
// One-shot crypto.hash (Node >= 20.12) skips a Hash object per digest: ~5 % of the digests' CPU.
const sha1 = crypto.hash
  ? (data) => crypto.hash("sha1", data, "buffer")
  : (data) => crypto.createHash("sha1").update(data).digest();
function writeSha1Base32(bytes, start, end, at) {
  const digest = sha1(bytes.subarray(start, end));
  let buffer = 0;
  let bits = 0;
  let out = at;
  for (let i = 0; i < digest.length; i++) {
    buffer = ((buffer << 8) | digest[i]) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bytes[out++] = BASE32.charCodeAt((buffer >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
}
function compressRecord(record, codec, dictionary) {
  if (codec.kind === "gzip") return zlib.gzipSync(record, { level: codec.level });
  const params = {
    [zlib.constants.ZSTD_c_compressionLevel]: codec.level,
    [zlib.constants.ZSTD_c_checksumFlag]: 1,
  };
  return zlib.zstdCompressSync(record, dictionary === undefined ? { params } : { params, dictionary });
}
function payloadDigests(bytes, layout) {
  const digests = [];
  let start = 0;
  for (let i = 0; i < layout.length; i += ${LAYOUT_FIELDS}) {
    const at = layout[i + 6];
    digests.push(at >= 0 ? Buffer.from(bytes.buffer, bytes.byteOffset + start + at, 32).toString("latin1") : null);
    start += layout[i];
  }
  return digests;
}
function finishRecords(bytes, layout, codec, dictionaries) {
  const members = [];
  let start = 0;
  for (let i = 0; i < layout.length; i += ${LAYOUT_FIELDS}) {
    const length = layout[i];
    if (layout[i + 3] >= 0) writeSha1Base32(bytes, start + layout[i + 1], start + layout[i + 2], start + layout[i + 3]);
    if (layout[i + 6] >= 0) writeSha1Base32(bytes, start + layout[i + 4], start + layout[i + 5], start + layout[i + 6]);
    const dictionary = dictionaries[i / ${LAYOUT_FIELDS}];
    members.push(compressRecord(bytes.subarray(start, start + length), codec, dictionary));
    start += length;
  }
  return members;
}
`;
