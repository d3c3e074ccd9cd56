import type { RecordDraft } from "./warc-draft.js";
import { exchangeDrafts, newRecordId } from "./warc-record.js";
import { buildZstdDictionary, type ZstdDictionary } from "./zstd-dictionary.js";

/**
 * What the dictionary of each new `.warc.zst` file is made of: the records of the last exchanges
 * written — WARC and HTTP headers whole, payloads only their start (page templates) — so a file's
 * dictionary follows what the crawl fetches now. Before any exchange (a run's first file) it is made
 * of a typical exchange instead.
 */

/** Exchanges kept as samples (the newest). */
const MAX_SAMPLES = 32;
/** Payload bytes of a record kept in its sample. */
const PAYLOAD_SAMPLE_BYTES = 1024;

/** The newest exchanges' records, trimmed, for {@link buildZstdDictionary}. */
export class WarcDictionarySamples {
  private readonly samples: Buffer[] = [];

  /** Keeps the records of one exchange (its drafts, digests still placeholders) as a sample. */
  add(drafts: readonly RecordDraft[]): void {
    this.samples.push(sampleOf(drafts));
    if (this.samples.length > MAX_SAMPLES) this.samples.shift();
  }

  /** A new dictionary of at most `contentBytes` of the samples, newest last (of a typical exchange before any). */
  dictionary(contentBytes: number): ZstdDictionary {
    return buildZstdDictionary(this.samples.length > 0 ? this.samples : [typicalExchange()], contentBytes);
  }
}

/** Each draft's head and block, the payload cut at {@link PAYLOAD_SAMPLE_BYTES}. */
function sampleOf(drafts: readonly RecordDraft[]): Buffer {
  const parts: Buffer[] = [];
  for (const draft of drafts) {
    parts.push(Buffer.from(draft.head, "utf8"));
    let payloadLeft = PAYLOAD_SAMPLE_BYTES;
    for (const [i, piece] of draft.block.entries()) {
      // Only what is kept is copied: a payload may be megabytes.
      const keep = i < draft.payloadFrom ? Number.POSITIVE_INFINITY : payloadLeft;
      if (keep === 0) continue;
      const bytes =
        typeof piece === "string"
          ? Buffer.from(piece.length > keep ? piece.slice(0, keep) : piece, "latin1")
          : Buffer.from(piece.subarray(0, Math.min(piece.byteLength, keep)));
      parts.push(bytes);
      if (i >= draft.payloadFrom) payloadLeft -= bytes.length;
    }
  }
  return Buffer.concat(parts);
}

/** A made-up but typical exchange: what a run's first file is compressed against. */
function typicalExchange(): Buffer {
  const date = new Date();
  const body = Buffer.from(
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
      '<meta name="viewport" content="width=device-width, initial-scale=1">\n<title></title>\n' +
      '<link rel="stylesheet" href="/style.css">\n</head>\n<body>\n<header><nav><ul>\n' +
      '<li><a href="/">Home</a></li>\n<li><a href="/about.html">About</a></li>\n</ul></nav></header>\n' +
      '<main>\n<article>\n<h1></h1>\n<p></p>\n</article>\n</main>\n<footer><p><a href="/contact.html">' +
      "Contact</a></p></footer>\n</body>\n</html>\n",
  );
  return sampleOf(
    exchangeDrafts({
      url: "http://www.example.com/index.html",
      ip: "192.0.2.1",
      date,
      requestId: newRecordId(),
      responseId: newRecordId(),
      warcinfoId: newRecordId(),
      requestHeaderBlock:
        "GET /index.html HTTP/1.1\r\nhost: www.example.com\r\nuser-agent: ubicrawl\r\n" +
        "accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8\r\naccept-encoding: gzip, deflate, br\r\n\r\n",
      responseHeaderBlock:
        `HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ${body.length}\r\n` +
        `Date: ${date.toUTCString()}\r\nLast-Modified: ${date.toUTCString()}\r\nCache-Control: max-age=3600\r\n` +
        "Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n",
      body,
      truncated: false,
    }),
  );
}
