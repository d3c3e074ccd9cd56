import type { Clock } from "../clock.js";
import { ErrorCode, UbiError } from "../errors.js";
import type { Logger } from "../logging/index.js";
import { NAME_PART_PATTERN, WARC_COMPRESSIONS, type WarcCompression } from "./warc-file-name.js";
import type { ClosedWarcFile } from "./warc-folder-scan.js";
import { ZSTD_NODE_VERSION, zstdAvailable } from "./zstd.js";

/** The options of a `WarcWriter`, their defaults and their checks, and its dependencies. */

/**
 * Default of {@link WarcWriterOptions.level} by compression: gzip level 1 costs half the CPU of 6 for
 * ~6 % more bytes; zstd's own default, 3, with a 16 KiB dictionary, writes ~17 % fewer bytes than gzip 1
 * for ~25 % more CPU (bench/warc-zstd.mjs).
 */
export const DEFAULT_WARC_LEVELS: Readonly<Record<WarcCompression, number>> = { gzip: 1, zstd: 3 };
/** Levels accepted by compression. */
const WARC_LEVEL_RANGES: Readonly<Record<WarcCompression, readonly [number, number]>> = {
  gzip: [1, 9],
  zstd: [1, 19],
};
/** Default of {@link WarcWriterOptions.dictionaryBytes}. */
export const DEFAULT_WARC_DICTIONARY_BYTES = 16 * 1024;
/** Smallest dictionary content worth a dictionary frame. */
const MIN_WARC_DICTIONARY_BYTES = 256;
/** Largest dictionary the profile requires readers to take (8 MiB). */
const MAX_WARC_DICTIONARY_BYTES = 8 * 1024 * 1024;
/** Options of a {@link WarcWriter}. */
export interface WarcWriterOptions {
  /** Folder of the WARC files (created if missing). */
  dir: string;
  /** The agent's identifier, last in file names; letters, digits, `.`, `_`, `-`. */
  agentId: string;
  /**
   * First part of file names.
   * @default "ubicrawl"
   */
  filePrefix?: string;
  /**
   * A file is finished once it holds this many bytes; the exchange that crosses the bound ends it.
   * @default 1073741824 (1 GiB)
   */
  maxFileBytes?: number;
  /**
   * `software` field of each file's warcinfo record.
   * @default "ubicrawl"
   */
  software?: string;
  /**
   * How records are compressed: `gzip` (`.warc.gz`) or `zstd` (`.warc.zst`; needs Node.js 22.19+ or 24.6+).
   * @default "gzip"
   */
  compression?: WarcCompression;
  /**
   * Compression level of each record (gzip 1 fastest … 9 smallest; zstd 1 … 19).
   * @default 1 for gzip, 3 for zstd ({@link DEFAULT_WARC_LEVELS})
   */
  level?: number;
  /**
   * zstd: bytes of sample records in each file's dictionary; 0 writes files without a dictionary.
   * @default 16384
   */
  dictionaryBytes?: number;
  /**
   * Compress and append in a worker thread, off the caller's thread; `false` does both synchronously in
   * `write` (once the file is open).
   * @default true
   */
  compressInWorker?: boolean;
}

/** {@link WarcWriterOptions} with every default filled in. */
export type ResolvedWarcWriterOptions = Required<WarcWriterOptions>;

/** `options` checked, defaults filled in; throws `InvalidArgument` naming the first bad option. */
export function resolveWarcWriterOptions(options: WarcWriterOptions): ResolvedWarcWriterOptions {
  if (typeof options.dir !== "string" || options.dir === "") invalid("dir must be a non-empty path");
  if (typeof options.agentId !== "string" || !NAME_PART_PATTERN.test(options.agentId)) {
    invalid(`agentId must match ${NAME_PART_PATTERN}, got ${JSON.stringify(options.agentId)}`);
  }
  const filePrefix = options.filePrefix ?? "ubicrawl";
  if (!NAME_PART_PATTERN.test(filePrefix)) invalid(`filePrefix must match ${NAME_PART_PATTERN}`);
  const maxFileBytes = options.maxFileBytes ?? 1024 ** 3;
  if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1)
    invalid("maxFileBytes must be a positive integer");
  const software = options.software ?? "ubicrawl";
  if (/[\r\n]/.test(software)) invalid("software must be one line");
  const compression = options.compression ?? "gzip";
  if (!WARC_COMPRESSIONS.includes(compression))
    invalid(`compression must be one of ${WARC_COMPRESSIONS.join(", ")}`);
  if (compression === "zstd" && !zstdAvailable()) {
    invalid(`zstd WARC compression needs Node.js ${ZSTD_NODE_VERSION} or later (this is ${process.version})`);
  }
  const level = options.level ?? DEFAULT_WARC_LEVELS[compression];
  const [minLevel, maxLevel] = WARC_LEVEL_RANGES[compression];
  if (!Number.isInteger(level) || level < minLevel || level > maxLevel) {
    invalid(`level must be in ${minLevel}..${maxLevel} for ${compression}`);
  }
  const dictionaryBytes = options.dictionaryBytes ?? DEFAULT_WARC_DICTIONARY_BYTES;
  if (
    !Number.isInteger(dictionaryBytes) ||
    (dictionaryBytes !== 0 && dictionaryBytes < MIN_WARC_DICTIONARY_BYTES) ||
    dictionaryBytes > MAX_WARC_DICTIONARY_BYTES
  ) {
    invalid(`dictionaryBytes must be 0 or in ${MIN_WARC_DICTIONARY_BYTES}..${MAX_WARC_DICTIONARY_BYTES}`);
  }
  const compressInWorker = options.compressInWorker ?? true;
  if (typeof compressInWorker !== "boolean") invalid("compressInWorker must be a boolean");
  return {
    dir: options.dir,
    agentId: options.agentId,
    filePrefix,
    maxFileBytes,
    software,
    compression,
    level,
    dictionaryBytes,
    compressInWorker,
  };
}

function invalid(message: string): never {
  throw new UbiError(ErrorCode.InvalidArgument, message);
}

/** Dependencies of a {@link WarcWriter}. */
export interface WarcWriterDeps {
  /** Names files and dates warcinfo records. @default systemClock */
  clock?: Clock;
  /** Where an index that could not be written is reported. @default defaultLogger() */
  logger?: Logger;
  /**
   * Told of each finished file once its index is written: as a rotation or the close finishes it, and
   * at open for every finished file found in the folder (one a crash kept from being told).
   */
  onFileClosed?: (file: ClosedWarcFile) => void;
}
