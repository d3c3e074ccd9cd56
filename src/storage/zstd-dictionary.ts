import { randomInt } from "node:crypto";
import { ZSTD_FRAME_MAGIC, zstdCompress, zstdDecompress } from "./zstd.js";

/**
 * Zstandard dictionaries (RFC 8878 section 5) built from sample records, and the dictionary frame that
 * starts a file of the WARC Zstandard profile (`.warc.zst`, IIPC warc-zstd 1.0).
 *
 * Node's `node:zlib` compresses with a dictionary but cannot train one (libzstd's ZDICT is not
 * exposed, and no maintained npm package wraps it), so this module writes one itself: a formatted
 * dictionary whose content is the samples (recent records: WARC and HTTP headers, the start of pages),
 * whose literal Huffman table is fitted to their bytes, and whose sequence tables are the format's
 * predefined distributions. The profile needs the formatted kind: each frame names its dictionary by
 * `Dictionary_ID`, which a raw-content dictionary does not have.
 */

/** First four bytes of a formatted dictionary (0xEC30A437, little-endian). */
const DICTIONARY_MAGIC = 0xec30a437;
/** Magic of the profile's dictionary frame: a skippable frame (0x184D2A5D). */
export const DICTIONARY_FRAME_MAGIC = 0x184d2a5d;
/** Level of the dictionary's own compression in its frame: written once a file, so the smallest. */
const ZSTD_DICTIONARY_FRAME_LEVEL = 19;
/** Dictionary ids the profile suggests for private dictionaries: [2^15, 2^31). */
const MIN_DICTIONARY_ID = 32_768;
const MAX_DICTIONARY_ID = 2 ** 31 - 1;
/** Literal bytes the Huffman table gives a code (0…127 written, 128 deduced); others need a new table per block. */
const HUFFMAN_SYMBOLS = 129;
/** Longest Huffman code, bits (the format allows 11). */
const MAX_HUFFMAN_BITS = 11;
/** The format's initial repeat offsets. */
const REPEAT_OFFSETS = [1, 4, 8] as const;

/**
 * The predefined distributions (RFC 8878 section 3.1.1.3.2.2), written into the dictionary as its
 * sequence tables: the accuracy log and the normalized counts of each symbol (-1: "less than 1").
 */
const OFFSET_TABLE = {
  accuracyLog: 5,
  counts: [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1],
};
const MATCH_LENGTH_TABLE = {
  accuracyLog: 6,
  counts: [
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
  ],
};
const LITERAL_LENGTH_TABLE = {
  accuracyLog: 6,
  counts: [
    4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1,
    -1, -1,
  ],
};

/** A formatted dictionary and its id. */
export interface ZstdDictionary {
  readonly id: number;
  /** The whole dictionary (magic, id, entropy tables, content), as `node:zlib` and `zstd -D` take it. */
  readonly bytes: Buffer;
}

/**
 * A dictionary whose content is the last `maxContentBytes` of `samples` joined (the most recent
 * last: zstd finds near content cheaper to refer to), with a fresh random id unless `id` is given.
 */
export function buildZstdDictionary(
  samples: readonly Uint8Array[],
  maxContentBytes: number,
  id: number = randomInt(MIN_DICTIONARY_ID, MAX_DICTIONARY_ID),
): ZstdDictionary {
  const joined = Buffer.concat(samples);
  const content = joined.subarray(Math.max(0, joined.length - maxContentBytes));
  if (content.length < REPEAT_OFFSETS[2]) {
    throw new RangeError(`a dictionary needs ${REPEAT_OFFSETS[2]} bytes of content or more`);
  }
  const header = Buffer.alloc(8);
  header.writeUInt32LE(DICTIONARY_MAGIC, 0);
  header.writeUInt32LE(id, 4);
  const repeats = Buffer.alloc(12);
  for (const [i, offset] of REPEAT_OFFSETS.entries()) repeats.writeUInt32LE(offset, i * 4);
  const bytes = Buffer.concat([
    header,
    huffmanDescription(literalCodeLengths(content)),
    fseDescription(OFFSET_TABLE),
    fseDescription(MATCH_LENGTH_TABLE),
    fseDescription(LITERAL_LENGTH_TABLE),
    repeats,
    content,
  ]);
  return { id, bytes };
}

/**
 * Code lengths for the bytes 0…128 fitted to their counts in `content` (each counted once more, so
 * every one has a code): Shannon lengths capped at {@link MAX_HUFFMAN_BITS}, then lengthened where the
 * code overflows and shortened where it leaves room, until it is complete (Kraft sum exactly 1), as
 * the format's deduced last weight requires.
 */
function literalCodeLengths(content: Uint8Array): number[] {
  const counts = new Array<number>(HUFFMAN_SYMBOLS).fill(1);
  let total = HUFFMAN_SYMBOLS;
  for (const byte of content) {
    if (byte < HUFFMAN_SYMBOLS) {
      counts[byte] = (counts[byte] as number) + 1;
      total++;
    }
  }
  const lengths = counts.map((count) =>
    Math.min(MAX_HUFFMAN_BITS, Math.max(1, Math.ceil(Math.log2(total / count)))),
  );
  // Units of 2^-MAX_HUFFMAN_BITS: a code of length L takes 2^(MAX - L) of FULL.
  const FULL = 2 ** MAX_HUFFMAN_BITS;
  const units = (symbol: number) => 2 ** (MAX_HUFFMAN_BITS - (lengths[symbol] as number));
  let used = lengths.reduce((sum, _, symbol) => sum + units(symbol), 0);
  while (used > FULL) {
    // Lengthen the rarest symbol that can still be lengthened.
    let pick = -1;
    for (let s = 0; s < HUFFMAN_SYMBOLS; s++) {
      if (
        (lengths[s] as number) < MAX_HUFFMAN_BITS &&
        (pick < 0 || (counts[s] as number) < (counts[pick] as number))
      )
        pick = s;
    }
    used -= units(pick) / 2;
    lengths[pick] = (lengths[pick] as number) + 1;
  }
  while (used < FULL) {
    // Shorten the most frequent of the longest codes: the gap is a multiple of their size.
    let pick = -1;
    for (let s = 0; s < HUFFMAN_SYMBOLS; s++) {
      const longer = pick < 0 || (lengths[s] as number) > (lengths[pick] as number);
      const sameButCommoner =
        pick >= 0 && lengths[s] === lengths[pick] && (counts[s] as number) > (counts[pick] as number);
      if (longer || sameButCommoner) pick = s;
    }
    used += units(pick);
    lengths[pick] = (lengths[pick] as number) - 1;
  }
  return lengths;
}

/**
 * The Huffman tree description in direct form: a header byte 127 + n, then the weights of symbols
 * 0…n-1 four bits each (high nibble first); the last symbol's weight is deduced by the reader.
 */
function huffmanDescription(lengths: readonly number[]): Buffer {
  const maxLength = Math.max(...lengths);
  const written = lengths.length - 1;
  const out = Buffer.alloc(1 + Math.ceil(written / 2));
  out[0] = 127 + written;
  for (let s = 0; s < written; s++) {
    const weight = maxLength + 1 - (lengths[s] as number);
    out[1 + (s >> 1)] = (out[1 + (s >> 1)] as number) | (s % 2 === 0 ? weight << 4 : weight);
  }
  return out;
}

/**
 * An FSE table description (RFC 8878 section 4.1.1): the accuracy log less 5 in four bits, then
 * each symbol's count + 1 in as many bits as the probability points left need (one less for small
 * values), least significant bit first. The tables written here have no zero counts, so no
 * zero-run flags.
 */
function fseDescription(table: { accuracyLog: number; counts: readonly number[] }): Buffer {
  const bytes: number[] = [];
  let acc = 0;
  let bits = 0;
  const put = (value: number, width: number) => {
    acc |= value << bits;
    bits += width;
    while (bits >= 8) {
      bytes.push(acc & 0xff);
      acc >>>= 8;
      bits -= 8;
    }
  };
  put(table.accuracyLog - 5, 4);
  let remaining = 2 ** table.accuracyLog + 1;
  let threshold = 2 ** table.accuracyLog;
  let width = table.accuracyLog + 1;
  for (const count of table.counts) {
    if (remaining <= 1) break;
    const max = 2 * threshold - 1 - remaining;
    remaining -= Math.abs(count);
    let value = count + 1;
    if (value >= threshold) value += max;
    put(value, value < max ? width - 1 : width);
    while (remaining < threshold) {
      width--;
      threshold >>= 1;
    }
  }
  if (remaining !== 1) throw new RangeError("the counts do not add up to the table size");
  if (bits > 0) bytes.push(acc & 0xff);
  return Buffer.from(bytes);
}

/**
 * The dictionary frame that starts a `.warc.zst` file: a skippable frame (magic 0x184D2A5D, length)
 * whose data is the dictionary compressed as one Zstandard frame without a dictionary, with its content
 * size and checksum, as the profile allows.
 */
export function dictionaryFrame(dictionary: ZstdDictionary): Buffer {
  const data = zstdCompress(dictionary.bytes, ZSTD_DICTIONARY_FRAME_LEVEL);
  const head = Buffer.alloc(8);
  head.writeUInt32LE(DICTIONARY_FRAME_MAGIC, 0);
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data]);
}

/**
 * The dictionary of a dictionary frame at the start of `bytes` and the frame's length; undefined when
 * `bytes` does not start with one; `"short"` when the frame runs past the end of `bytes`. Throws on a
 * frame that is there but holds no valid dictionary.
 */
export function readDictionaryFrame(
  bytes: Uint8Array,
): { dictionary: Buffer; length: number } | "short" | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < 4) return buf.length === 0 ? undefined : "short";
  if (buf.readUInt32LE(0) !== DICTIONARY_FRAME_MAGIC) return undefined;
  if (buf.length < 8) return "short";
  const length = 8 + buf.readUInt32LE(4);
  if (buf.length < length) return "short";
  let dictionary = buf.subarray(8, length);
  if (dictionary.length >= 4 && dictionary.readUInt32LE(0) === ZSTD_FRAME_MAGIC) {
    dictionary = zstdDecompress(dictionary);
  }
  if (dictionary.length < 8 || dictionary.readUInt32LE(0) !== DICTIONARY_MAGIC) {
    throw new RangeError("the dictionary frame holds no Zstandard dictionary");
  }
  return { dictionary, length };
}
