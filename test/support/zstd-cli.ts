import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { readWarcFile, type WarcRecordRead } from "../../src/storage/warc-reader.js";
import { DICTIONARY_FRAME_MAGIC } from "../../src/storage/zstd-dictionary.js";

/**
 * The zstd command (Debian's `zstd` package), an independent reader of the `.warc.zst` files the
 * agents write: its decompression, with the dictionary each file carries, read back by the WARC reader.
 */

/** Where the zstd command is expected. */
export const ZSTD_CLI = "/usr/bin/zstd";

/** Why the zstd tests cannot run here, or undefined when they can. */
export const noZstdCli = existsSync(ZSTD_CLI) ? undefined : `no ${ZSTD_CLI} (apt-get install zstd)`;

/** Runs the zstd command quietly with `args`, `input` on its stdin; returns its stdout. */
export function zstd(args: readonly string[], input?: Buffer): Buffer {
  return execFileSync(ZSTD_CLI, ["-q", ...args], { input, maxBuffer: 1 << 28 });
}

/** The dictionary in the dictionary frame at the start of a `.warc.zst` file, decompressed by the zstd command. */
export function cliDictionary(file: Buffer): Buffer {
  if (file.readUInt32LE(0) !== DICTIONARY_FRAME_MAGIC) {
    throw new Error(`no dictionary frame at the start (magic ${file.readUInt32LE(0).toString(16)})`);
  }
  return zstd(["-d", "-c"], file.subarray(8, 8 + file.readUInt32LE(4)));
}

/** The WARC records of `.warc.zst` file `path`, decompressed by the zstd command with the file's own dictionary. */
export async function cliRecords(path: string): Promise<WarcRecordRead[]> {
  const dictionaryPath = `${path}.dict`;
  await writeFile(dictionaryPath, cliDictionary(await readFile(path)));
  const plainPath = `${path}.plain.warc`;
  try {
    await writeFile(plainPath, zstd(["-d", "-c", "-D", dictionaryPath, path]));
    const records: WarcRecordRead[] = [];
    for await (const record of readWarcFile(plainPath)) records.push(record);
    return records;
  } finally {
    await rm(dictionaryPath, { force: true });
    await rm(plainPath, { force: true });
  }
}
