import type { PayloadOriginal } from "./state/digest-records.js";
import type { RecordDraft } from "./warc-draft.js";
import type { IndexedRecord } from "./warc-file-slot.js";
import { exchangeDrafts, newRecordId, revisitDrafts } from "./warc-record.js";

/**
 * What the WARC writer archives — an HTTP fetch as a `request` and a `response` record, or as a
 * `request` and a `revisit` record when its payload was stored before — and the drafts of those
 * records, with what the file's index says of them.
 */

/** One HTTP fetch to archive as a `request` and a `response` record. */
export interface WarcExchange {
  /** The fetched URL (`WARC-Target-URI`). */
  url: string;
  /** The server's IP address (`WARC-IP-Address`); empty when unknown. */
  ip: string;
  /** When the request was sent (`WARC-Date` of both records). */
  date: Date;
  /** Request line and headers through the blank line, one byte per char (latin1), as sent. */
  requestHeaderBlock: string;
  /** Status line and headers through the blank line, one byte per char (latin1), as received. */
  responseHeaderBlock: string;
  /** The body as on the wire (content-encoded, transfer-decoded). */
  body: Uint8Array;
  /** The body was cut at the size cap (`WARC-Truncated: length`). */
  truncated?: boolean;
  /**
   * `sha1:` digest of `body` when the caller has computed it already (to check it for duplicates):
   * written as the response's `WARC-Payload-Digest` as given, so the body is not digested twice.
   */
  payloadDigest?: string;
}

/**
 * An HTTP fetch whose payload was stored before, to archive as a `request` and a `revisit` record
 * (identical-payload-digest profile) instead of storing the payload again.
 */
export interface WarcRevisit extends Omit<WarcExchange, "body" | "truncated"> {
  /** `sha1:` digest of the payload (the original response's `WARC-Payload-Digest`). */
  payloadDigest: string;
  /** The response that stored the payload. */
  refersTo: PayloadOriginal;
  /**
   * The server answered `304 Not Modified` to a conditional GET: written with WARC 1.1's
   * server-not-modified profile, `refersTo` the URL's last capture and `payloadDigest` its payload's.
   */
  notModified?: boolean;
}

/** The records of one exchange or revisit, drafted, and the one its index line is of. */
export interface DraftedExchange {
  /** The request record, then the response or revisit record (digests come with their appending). */
  readonly drafts: RecordDraft[];
  /** The response or revisit record's index line. */
  readonly indexed: IndexedRecord;
  /** The response or revisit record's `WARC-Record-ID`. */
  readonly responseId: string;
}

/** Drafts the request and response records of `exchange`, in the file whose warcinfo is `warcinfoId`. */
export function draftExchange(exchange: WarcExchange, warcinfoId: string): DraftedExchange {
  const responseId = newRecordId();
  const drafts = exchangeDrafts({
    url: exchange.url,
    ip: exchange.ip,
    date: exchange.date,
    requestId: newRecordId(),
    responseId,
    warcinfoId,
    requestHeaderBlock: exchange.requestHeaderBlock,
    responseHeaderBlock: exchange.responseHeaderBlock,
    body: exchange.body,
    truncated: exchange.truncated === true,
    ...(exchange.payloadDigest === undefined ? {} : { payloadDigest: exchange.payloadDigest }),
  });
  const indexed = {
    at: 1,
    url: exchange.url,
    date: exchange.date,
    responseHeaderBlock: exchange.responseHeaderBlock,
    ...(exchange.payloadDigest === undefined ? {} : { payloadDigest: exchange.payloadDigest }),
  };
  return { drafts, indexed, responseId };
}

/** Drafts the request and revisit records of `revisit`, in the file whose warcinfo is `warcinfoId`. */
export function draftRevisit(revisit: WarcRevisit, warcinfoId: string): DraftedExchange {
  const responseId = newRecordId();
  const drafts = revisitDrafts({ ...revisit, requestId: newRecordId(), responseId, warcinfoId });
  const indexed = {
    at: 1,
    url: revisit.url,
    date: revisit.date,
    responseHeaderBlock: revisit.responseHeaderBlock,
    payloadDigest: revisit.payloadDigest,
    revisit: true,
  };
  return { drafts, indexed, responseId };
}
