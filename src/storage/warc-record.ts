import { createHash, hash, randomUUID } from "node:crypto";
import { ErrorCode, UbiError } from "../errors.js";
import { DIGEST_PLACEHOLDER, type RecordDraft } from "./warc-draft.js";

/**
 * WARC 1.1 records built by hand, byte for byte: the HTTP header blocks go in exactly as they were on
 * the wire (warcio would re-serialize them from a parsed map), and digests use Node's native SHA-1.
 */

/** The WARC record types ubicrawl writes. */
export type WarcRecordType = "warcinfo" | "request" | "response" | "revisit";

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
  // One chunk (a page's body, the common case): one-shot, without a Hash object (~20 µs of ~50 a 17 KB page).
  if (chunks.length === 1) return `sha1:${base32(hash("sha1", chunks[0] as Uint8Array, "buffer"))}`;
  const digest = createHash("sha1");
  for (const chunk of chunks) digest.update(chunk);
  return `sha1:${base32(digest.digest())}`;
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

/** A draft of `record` without digests (the compressor adds nothing but the record end). */
export function recordDraft(record: WarcRecordInput): RecordDraft {
  let blockLength = 0;
  for (const chunk of record.block) blockLength += chunk.byteLength;
  return {
    head: recordHead(record, blockLength),
    block: record.block,
    payloadFrom: record.block.length,
    blockDigestAt: -1,
    payloadDigestAt: -1,
  };
}

/** What {@link exchangeDrafts} needs about one HTTP exchange. */
export interface ExchangeDraftInput {
  readonly url: string;
  /** Empty when unknown (no `WARC-IP-Address`). */
  readonly ip: string;
  readonly date: Date;
  readonly requestId: string;
  readonly responseId: string;
  readonly warcinfoId: string;
  /** Request line and headers through the blank line, latin1. */
  readonly requestHeaderBlock: string;
  /** Status line and headers through the blank line, latin1. */
  readonly responseHeaderBlock: string;
  readonly body: Uint8Array;
  readonly truncated: boolean;
  /** `sha1:` digest of `body` when already computed: written as given instead of digested again. */
  readonly payloadDigest?: string;
}

/** A `sha1:` digest as {@link sha1Digest} writes it: 32 base32 characters. */
const SHA1_DIGEST = /^sha1:[A-Z2-7]{32}$/;

const BLOCK_DIGEST = "WARC-Block-Digest: sha1:";
const PAYLOAD_DIGEST = `\r\nWARC-Payload-Digest: sha1:`;
// The digest of an empty payload (a request's), computed once.
const EMPTY_PAYLOAD_DIGEST = sha1Digest([]).slice("sha1:".length);

/**
 * The `request` and `response` records of one exchange as drafts whose digests the compressor fills
 * in: the same bytes {@link serializeWarcRecord} would write, without hashing or copying here.
 */
export function exchangeDrafts(input: ExchangeDraftInput): [request: RecordDraft, response: RecordDraft] {
  // A CR or LF in a value would let a crawled URL inject fields or records; the rest is generated here.
  if (hasLineBreak(input.url)) lineBreakIn("WARC-Target-URI");
  if (hasLineBreak(input.ip)) lineBreakIn("WARC-IP-Address");
  const date = warcDate(input.date);
  const target = `WARC-Target-URI: ${input.url}${CRLF}${input.ip ? `WARC-IP-Address: ${input.ip}${CRLF}` : ""}`;
  const requestLength = input.requestHeaderBlock.length;
  const requestTop =
    `WARC/1.1${CRLF}WARC-Type: request${CRLF}WARC-Record-ID: ${input.requestId}${CRLF}WARC-Date: ${date}${CRLF}` +
    `${target}WARC-Concurrent-To: ${input.responseId}${CRLF}WARC-Warcinfo-ID: ${input.warcinfoId}${CRLF}` +
    BLOCK_DIGEST;
  const request: RecordDraft = {
    head:
      `${requestTop}${DIGEST_PLACEHOLDER}${PAYLOAD_DIGEST}${EMPTY_PAYLOAD_DIGEST}${CRLF}` +
      `Content-Type: application/http;msgtype=request${CRLF}Content-Length: ${requestLength}${CRLF}${CRLF}`,
    block: [input.requestHeaderBlock],
    payloadFrom: 1,
    blockDigestAt: Buffer.byteLength(requestTop, "utf8"),
    payloadDigestAt: -1,
  };
  const responseLength = input.responseHeaderBlock.length + input.body.byteLength;
  const responseTop =
    `WARC/1.1${CRLF}WARC-Type: response${CRLF}WARC-Record-ID: ${input.responseId}${CRLF}WARC-Date: ${date}${CRLF}` +
    `${target}WARC-Concurrent-To: ${input.requestId}${CRLF}WARC-Warcinfo-ID: ${input.warcinfoId}${CRLF}` +
    BLOCK_DIGEST;
  const blockDigestAt = Buffer.byteLength(responseTop, "utf8");
  const known = input.payloadDigest;
  if (known !== undefined && !SHA1_DIGEST.test(known)) {
    throw new UbiError(ErrorCode.InvalidArgument, `not a sha1: payload digest: ${JSON.stringify(known)}`);
  }
  const response: RecordDraft = {
    head:
      `${responseTop}${DIGEST_PLACEHOLDER}${PAYLOAD_DIGEST}${known?.slice("sha1:".length) ?? DIGEST_PLACEHOLDER}${CRLF}` +
      (input.truncated ? `WARC-Truncated: length${CRLF}` : "") +
      `Content-Type: application/http;msgtype=response${CRLF}Content-Length: ${responseLength}${CRLF}${CRLF}`,
    block: [input.responseHeaderBlock, input.body],
    payloadFrom: 1,
    blockDigestAt,
    payloadDigestAt:
      known === undefined ? blockDigestAt + DIGEST_PLACEHOLDER.length + PAYLOAD_DIGEST.length : -1,
  };
  return [request, response];
}

/** WARC 1.1's profile of a revisit whose payload is identical to an earlier response's. */
export const IDENTICAL_PAYLOAD_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
/** WARC 1.1's profile of a revisit the server answered `304 Not Modified` to (a conditional GET). */
export const SERVER_NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/** What {@link revisitDrafts} needs besides an exchange's: the payload's digest and its first response. */
export interface RevisitDraftInput extends Omit<ExchangeDraftInput, "body" | "truncated"> {
  /**
   * `sha1:` digest of the payload, the same as the original response's `WARC-Payload-Digest`; with
   * `notModified`, the digest of the payload the 304 confirms (not written: a 304 carries none).
   */
  readonly payloadDigest: string;
  /** The response that stored this payload first (with `notModified`: the URL's last capture). */
  readonly refersTo: { readonly url: string; readonly date: string; readonly recordId: string };
  /** The server answered 304 Not Modified: the server-not-modified profile. Absent: identical payload. */
  readonly notModified?: boolean;
}

/**
 * The `request` and `revisit` records of an exchange whose payload was stored before: WARC 1.1's
 * identical-payload-digest profile (the revisit carries the payload's digest), or its
 * server-not-modified profile for a 304 answer. The revisit holds the response's header block only and
 * refers to the stored response by URI, date and record id.
 */
export function revisitDrafts(input: RevisitDraftInput): [request: RecordDraft, revisit: RecordDraft] {
  const { url, date, recordId } = input.refersTo;
  if (hasLineBreak(url)) lineBreakIn("WARC-Refers-To-Target-URI");
  if (hasLineBreak(date) || hasLineBreak(recordId)) lineBreakIn("WARC-Refers-To");
  if (!/^sha1:[A-Z2-7]{32}$/.test(input.payloadDigest)) {
    throw new UbiError(ErrorCode.InvalidArgument, `not a sha1 payload digest: ${input.payloadDigest}`);
  }
  const [request] = exchangeDrafts({ ...input, body: new Uint8Array(0), truncated: false });
  const target = `WARC-Target-URI: ${input.url}${CRLF}${input.ip ? `WARC-IP-Address: ${input.ip}${CRLF}` : ""}`;
  const profile = input.notModified ? SERVER_NOT_MODIFIED_PROFILE : IDENTICAL_PAYLOAD_PROFILE;
  const top =
    `WARC/1.1${CRLF}WARC-Type: revisit${CRLF}WARC-Record-ID: ${input.responseId}${CRLF}` +
    `WARC-Date: ${warcDate(input.date)}${CRLF}${target}WARC-Concurrent-To: ${input.requestId}${CRLF}` +
    `WARC-Warcinfo-ID: ${input.warcinfoId}${CRLF}WARC-Profile: ${profile}${CRLF}` +
    `WARC-Refers-To-Target-URI: ${url}${CRLF}WARC-Refers-To-Date: ${date}${CRLF}` +
    `WARC-Refers-To: ${recordId}${CRLF}${BLOCK_DIGEST}`;
  const payloadDigest = input.notModified ? "" : `${CRLF}WARC-Payload-Digest: ${input.payloadDigest}`;
  const revisit: RecordDraft = {
    head:
      `${top}${DIGEST_PLACEHOLDER}${payloadDigest}${CRLF}` +
      `Content-Type: application/http;msgtype=response${CRLF}` +
      `Content-Length: ${input.responseHeaderBlock.length}${CRLF}${CRLF}`,
    block: [input.responseHeaderBlock],
    payloadFrom: 1,
    blockDigestAt: Buffer.byteLength(top, "utf8"),
    payloadDigestAt: -1,
  };
  return [request, revisit];
}

function hasLineBreak(value: string): boolean {
  return value.includes("\n") || value.includes("\r");
}

function lineBreakIn(name: string): never {
  throw new UbiError(ErrorCode.InvalidArgument, `WARC field ${name} contains a line break`);
}

function recordHead(record: WarcRecordInput, blockLength: number): string {
  let head = `WARC/1.1${CRLF}WARC-Type: ${record.type}${CRLF}WARC-Record-ID: ${record.recordId}${CRLF}`;
  head += `WARC-Date: ${warcDate(record.date)}${CRLF}`;
  for (const [name, value] of record.fields) {
    // A CR or LF in a value would let a crawled URL inject fields or records.
    if (/[\r\n]/.test(value)) lineBreakIn(name);
    head += `${name}: ${value}${CRLF}`;
  }
  return `${head}Content-Length: ${blockLength}${CRLF}${CRLF}`;
}

/** The uncompressed bytes of one record: version line, named fields, blank line, block, CRLF CRLF. */
export function serializeWarcRecord(record: WarcRecordInput): Buffer {
  let blockLength = 0;
  for (const chunk of record.block) blockLength += chunk.byteLength;
  return Buffer.concat([Buffer.from(recordHead(record, blockLength), "utf8"), ...record.block, RECORD_END]);
}
