import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { gzipSync } from "node:zlib";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { WorkFile } from "./work-file.js";

/**
 * A sorted CDXJ index turned into the compressed form WACZ readers load by parts (ZipNum, as pywb and
 * py-wacz write it): `index.cdx.gz`, blocks of {@link LINES_PER_BLOCK} lines each gzipped as its own
 * member, and `index.idx`, a `!meta` line then one line per block — its first line's key and
 * timestamp, and `{"offset": …, "length": …, "digest": "sha256:…", "filename": "index.cdx.gz"}`. A
 * reader loads the small `.idx` at open and a block only when a URL in it is asked for. Streamed: one
 * block in memory at a time.
 */

/** Lines per gzipped block (py-wacz's choice). */
export const LINES_PER_BLOCK = 3000;

/** The compressed index's file name in the package's `indexes/`. */
export const ZIPNUM_CDX_NAME = "index.cdx.gz";

/** Its block index's file name. */
export const ZIPNUM_IDX_NAME = "index.idx";

/** Writes the ZipNum form of the sorted index at `cdxjPath` to `cdxPath` and `idxPath`; returns its blocks. */
export async function writeZipNumIndex(cdxjPath: string, cdxPath: string, idxPath: string): Promise<number> {
  const cdx = new WorkFile(cdxPath);
  const idx = new WorkFile(idxPath);
  const input = createReadStream(cdxjPath, { encoding: "utf8" });
  let offset = 0;
  let blocks = 0;
  let block: string[] = [];
  const flush = async () => {
    const first = block[0] as string;
    const compressed = gzipSync(`${block.join("\n")}\n`);
    block = [];
    const digest = createHash("sha256").update(compressed).digest("hex");
    const prefix = first.slice(0, first.indexOf(" {"));
    await cdx.write(compressed);
    await idx.write(
      `${prefix} {"offset": ${offset}, "length": ${compressed.length}, "digest": "sha256:${digest}", "filename": "${ZIPNUM_CDX_NAME}"}\n`,
    );
    offset += compressed.length;
    blocks++;
  };
  try {
    await idx.write(`!meta 0 {"format": "cdxj-gzip-1.0", "filename": "${ZIPNUM_CDX_NAME}"}\n`);
    for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line === "") continue;
      block.push(line);
      if (block.length === LINES_PER_BLOCK) await flush();
    }
    if (block.length > 0) await flush();
    await Promise.all([cdx.close(), idx.close()]);
  } catch (error) {
    cdx.abandon();
    idx.abandon();
    if (error instanceof UbiError) throw error;
    throw new UbiError(ErrorCode.StorageFailed, `cannot read ${cdxjPath}: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    input.destroy();
  }
  return blocks;
}
