import { createReadStream } from "node:fs";
import { WARCParser } from "warcio";

/**
 * Reading WARC files back with warcio's parser (an independent implementation, so tests and the chaos
 * checks do not trust the writer's own reading of its output).
 */

/** One record read from a WARC file. */
export interface WarcRecordRead {
  /** `WARC-Type`. */
  type: string;
  /** Byte offset of the record (its gzip member) in the file. */
  offset: number;
  /** Named fields, names lower-cased; repeated fields are joined with ", ". */
  headers: ReadonlyMap<string, string>;
  /** The whole record block (for HTTP records: header block then payload). */
  block: Uint8Array;
}

/** Yields every record of a (gzipped or plain) WARC file in order. */
export async function* readWarcFile(path: string): AsyncGenerator<WarcRecordRead> {
  const stream = createReadStream(path);
  try {
    const parser = new WARCParser(stream, { parseHttp: false });
    for await (const record of parser) {
      const offset = parser.offset;
      const headers = new Map<string, string>();
      for (const [name, value] of record.warcHeaders.headers) headers.set(name.toLowerCase(), value);
      const block = await record.readFully(false);
      yield { type: record.warcType ?? "", offset, headers, block };
    }
  } finally {
    stream.destroy();
  }
}

/** Splits an `application/http` block at its first blank line into header text and payload bytes. */
export function splitHttpBlock(block: Uint8Array): { headerBlock: string; payload: Uint8Array } {
  const bytes = Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0) return { headerBlock: bytes.toString("latin1"), payload: new Uint8Array(0) };
  return { headerBlock: bytes.toString("latin1", 0, end + 4), payload: bytes.subarray(end + 4) };
}
