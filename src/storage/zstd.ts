import { createRequire } from "node:module";

/**
 * Zstandard from `node:zlib`, which has it from Node.js 22.15 (and 23.8) on. On an older Node the
 * functions are missing: callers check {@link zstdAvailable} first and say what is needed.
 */

/** First four bytes of a Zstandard frame (0xFD2FB528, little-endian). */
export const ZSTD_FRAME_MAGIC = 0xfd2fb528;

/** The Node line and release from which `node:zlib` has Zstandard. */
export const ZSTD_NODE_VERSION = "22.15";

interface ZlibWithZstd {
  zstdCompressSync?: (data: Uint8Array, options: object) => Buffer;
  zstdDecompressSync?: (data: Uint8Array, options: object) => Buffer;
  constants: Record<string, number | undefined>;
}

// Through require: the typings of the Node line this is built with may not declare the zstd functions.
const zlib = createRequire(import.meta.url)("node:zlib") as ZlibWithZstd;

/** True when this Node's `node:zlib` has Zstandard. */
export function zstdAvailable(): boolean {
  return typeof zlib.zstdCompressSync === "function" && typeof zlib.zstdDecompressSync === "function";
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
