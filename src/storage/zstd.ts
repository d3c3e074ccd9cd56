import { createRequire } from "node:module";

/**
 * Zstandard from `node:zlib`: compression from Node.js 22.15 on, its `dictionary` option from 22.19 and
 * 24.6 on (before, the option is silently ignored: frames would name no dictionary). Callers check
 * {@link zstdAvailable} first, which tries a dictionary, and say what is needed.
 */

/** First four bytes of a Zstandard frame (0xFD2FB528, little-endian). */
export const ZSTD_FRAME_MAGIC = 0xfd2fb528;

/** The Node releases from which `node:zlib` has Zstandard with dictionaries. */
export const ZSTD_NODE_VERSION = "22.19 (24.6 on the 24 line)";

interface ZlibWithZstd {
  zstdCompressSync?: (data: Uint8Array, options: object) => Buffer;
  zstdDecompressSync?: (data: Uint8Array, options: object) => Buffer;
  constants: Record<string, number | undefined>;
}

// Through require: the typings of the Node line this is built with may not declare the zstd functions.
const zlib = createRequire(import.meta.url)("node:zlib") as ZlibWithZstd;

let available: boolean | undefined;

/**
 * True when this Node's `node:zlib` has Zstandard and honours dictionaries: a text compressed with
 * itself as its dictionary must come out far smaller than without one.
 */
export function zstdAvailable(): boolean {
  if (available === undefined) {
    const compress = zlib.zstdCompressSync;
    if (typeof compress !== "function" || typeof zlib.zstdDecompressSync !== "function") {
      available = false;
    } else {
      const text = Buffer.from(Array.from({ length: 64 }, (_, i) => `${(i * 7919) % 1000}`).join(" "));
      available = compress(text, { dictionary: text }).length * 4 < compress(text, {}).length;
    }
  }
  return available;
}

/** `data` as one Zstandard frame with its content size and checksum, at `level`, with `dictionary` if given. */
export function zstdCompress(data: Uint8Array, level: number, dictionary?: Uint8Array): Buffer {
  const compress = zlib.zstdCompressSync;
  if (!compress) throw notAvailable();
  const params = {
    [zlib.constants.ZSTD_c_compressionLevel as number]: level,
    [zlib.constants.ZSTD_c_checksumFlag as number]: 1,
  };
  return compress(data, dictionary === undefined ? { params } : { params, dictionary });
}

/** Decompresses the frames of `data` (their checksums checked), with `dictionary` if given. */
export function zstdDecompress(data: Uint8Array, dictionary?: Uint8Array): Buffer {
  const decompress = zlib.zstdDecompressSync;
  if (!decompress) throw notAvailable();
  return decompress(data, dictionary === undefined ? {} : { dictionary });
}

function notAvailable(): Error {
  return new Error(`Zstandard needs Node.js ${ZSTD_NODE_VERSION} or later (this is ${process.version})`);
}
