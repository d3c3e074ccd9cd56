import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { WARCParser } from "warcio";
import { warcFileCompression } from "./warc-file-name.js";
import { zstdDecompress } from "./zstd.js";
import { readDictionaryFrame } from "./zstd-dictionary.js";
import { scanZstdFrame } from "./zstd-frames.js";

/**
 * Reading WARC files back with warcio's parser (an independent implementation, so tests and the chaos
 * checks do not trust the writer's own reading of its output).
 */

/** One record read from a WARC file. */
export interface WarcRecordRead {
  /** `WARC-Type`. */
  type: string;
  /** Byte offset of the record (its gzip member, or its first Zstandard frame) in the file. */
  offset: number;
  /** Named fields, names lower-cased; repeated fields are joined with ", ". */
  headers: ReadonlyMap<string, string>;
  /** The whole record block (for HTTP records: header block then payload). */
  block: Uint8Array;
}

/**
 * Yields every record of a WARC file in order: gzipped or plain (read by warcio), or `.warc.zst` (its
 * frames decompressed here with the file's dictionary, warcio reading the records they hold).
 */
export async function* readWarcFile(path: string): AsyncGenerator<WarcRecordRead> {
  if (warcFileCompression(path) === "zstd") {
    yield* readZstdWarcFile(path);
    return;
  }
  const stream = createReadStream(path);
  try {
    yield* parseRecords(stream, (offset) => offset);
  } finally {
    stream.destroy();
  }
}

/** Records parsed by warcio from `source`; `fileOffset` maps the parser's offsets to the file's. */
async function* parseRecords(
  source: AsyncIterable<Uint8Array>,
  fileOffset: (parserOffset: number) => number,
): AsyncGenerator<WarcRecordRead> {
  const parser = new WARCParser(source, { parseHttp: false });
  for await (const record of parser) {
    const offset = fileOffset(parser.offset);
    const headers = new Map<string, string>();
    for (const [name, value] of record.warcHeaders.headers) headers.set(name.toLowerCase(), value);
    const block = await record.readFully(false);
    yield { type: record.warcType ?? "", offset, headers, block };
  }
}

/** The records of a `.warc.zst` file; each record's offset is that of its first frame. */
async function* readZstdWarcFile(path: string): AsyncGenerator<WarcRecordRead> {
  const bytes = await readFile(path);
  const dictionaryFrame = readDictionaryFrame(bytes);
  if (dictionaryFrame === "short") throw new Error(`${path}: its dictionary frame is cut short`);
  const dictionary = dictionaryFrame?.dictionary;
  // Where each frame's content starts in the decompressed stream, and in the file.
  const frameAt = new Map<number, number>();
  const contents: Buffer[] = [];
  let decompressed = 0;
  for (let pos = dictionaryFrame?.length ?? 0; pos < bytes.length; ) {
    const scanned = scanZstdFrame(bytes.subarray(pos));
    if (scanned.kind === "short" || scanned.kind === "bad") {
      throw new Error(
        `${path}: ${scanned.kind === "short" ? "a frame cut short" : "not a Zstandard frame"} at byte ${pos}`,
      );
    }
    if (scanned.kind === "frame") {
      const content = zstdDecompress(bytes.subarray(pos, pos + scanned.length), dictionary);
      frameAt.set(decompressed, pos);
      contents.push(content);
      decompressed += content.length;
    }
    pos += scanned.length;
  }
  async function* chunks(): AsyncGenerator<Uint8Array> {
    yield* contents;
  }
  yield* parseRecords(chunks(), (offset) => frameAt.get(offset) ?? -1);
}

/** Splits an `application/http` block at its first blank line into header text and payload bytes. */
export function splitHttpBlock(block: Uint8Array): { headerBlock: string; payload: Uint8Array } {
  const bytes = Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0) return { headerBlock: bytes.toString("latin1"), payload: new Uint8Array(0) };
  return { headerBlock: bytes.toString("latin1", 0, end + 4), payload: bytes.subarray(end + 4) };
}
