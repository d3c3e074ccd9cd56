import { createHash, randomUUID } from "node:crypto";
import { ErrorCode, UbiError } from "../errors.js";

/**
 * WARC 1.1 records built by hand, byte for byte: the HTTP header blocks go in exactly as they were on
 * the wire (warcio would re-serialize them from a parsed map), and digests use Node's native SHA-1.
 */

/** The WARC record types ubicrawl writes. */
export type WarcRecordType = "warcinfo" | "request" | "response";

/** One record to serialize: its named fields (in order) and its block as byte chunks. */
export interface WarcRecordInput {
  /** `WARC-Type`. */
  type: WarcRecordType;
  /** `WARC-Record-ID`, as made by {@link newRecordId}. */
  recordId: string;
  /** `WARC-Date`. */
  date: Date;
  /** Further named fields in output order; `Content-Length` is added from the block. */
  fields: ReadonlyArray<readonly [name: string, value: string]>;
  /** The record block, concatenated in order. */
  block: readonly Uint8Array[];
}

const CRLF = "\r\n";
const RECORD_END = Buffer.from("\r\n\r\n", "latin1");
const BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** A fresh `<urn:uuid:…>` record id. */
export function newRecordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** WARC-Date text: ISO 8601 UTC; WARC 1.1 allows the millisecond fraction. */
export function warcDate(date: Date): string {
  if (Number.isNaN(date.getTime()))
    throw new UbiError(ErrorCode.InvalidArgument, "WARC-Date is an invalid Date");
  return date.toISOString();
}

/** `sha1:` plus the RFC 4648 base32 of the SHA-1 of the chunks, the form WARC tools expect. */
export function sha1Digest(chunks: readonly Uint8Array[]): string {
  const hash = createHash("sha1");
  for (const chunk of chunks) hash.update(chunk);
  return `sha1:${base32(hash.digest())}`;
}

/** RFC 4648 base32 (upper case, `=` padded). */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

/** The uncompressed bytes of one record: version line, named fields, blank line, block, CRLF CRLF. */
export function serializeWarcRecord(record: WarcRecordInput): Buffer {
  let blockLength = 0;
  for (const chunk of record.block) blockLength += chunk.byteLength;
  let head = `WARC/1.1${CRLF}WARC-Type: ${record.type}${CRLF}WARC-Record-ID: ${record.recordId}${CRLF}`;
  head += `WARC-Date: ${warcDate(record.date)}${CRLF}`;
  for (const [name, value] of record.fields) {
    // A CR or LF in a value would let a crawled URL inject fields or records.
    if (/[\r\n]/.test(value)) {
      throw new UbiError(ErrorCode.InvalidArgument, `WARC field ${name} contains a line break`);
    }
    head += `${name}: ${value}${CRLF}`;
  }
  head += `Content-Length: ${blockLength}${CRLF}${CRLF}`;
  return Buffer.concat([Buffer.from(head, "utf8"), ...record.block, RECORD_END]);
}
