import { open } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import { warcFileCompression } from "../storage/warc-file-name.js";

/**
 * The package's pages list (`pages/pages.jsonl`, WACZ's JSON Pages format): a header line, then one
 * line per HTML page answered 200 — responses, and revisits of them — with its title where the page
 * holds one and its WARC file is gzipped, and `"seed": true` for a seed. Built from the merged index,
 * one record read back per page, so in bounded memory.
 */

/** The first line of the list. */
export const PAGES_HEADER = `${JSON.stringify({ format: "json-pages-1.0", id: "pages", title: "All Pages" })}\n`;

/** Bytes of a page's payload searched for its `<title>`. */
const TITLE_SEARCH_BYTES = 64 * 1024;

/** An index line that may be a page: status 200, an HTML media type or a revisit. */
export interface PageCandidate {
  readonly url: string;
  /** The index line's 14-digit timestamp. */
  readonly timestamp: string;
  readonly revisit: boolean;
  readonly filename: string;
  readonly offset: number;
  readonly length: number;
}

/** The candidate of a merged index line, or undefined when it cannot be an HTML page. */
export function pageCandidate(line: string): PageCandidate | undefined {
  const space = line.indexOf(" ");
  const timestamp = line.slice(space + 1, space + 15);
  const fields = JSON.parse(line.slice(space + 16)) as Record<string, string | undefined>;
  if (fields.status !== "200") return undefined;
  const revisit = fields.mime === "warc/revisit";
  if (!revisit && !HTML_MIMES.has(fields.mime ?? "")) return undefined;
  return {
    url: fields.url ?? "",
    timestamp,
    revisit,
    filename: fields.filename ?? "",
    offset: Number(fields.offset),
    length: Number(fields.length),
  };
}

const HTML_MIMES = new Set(["text/html", "application/xhtml+xml"]);

/**
 * The pages-list line (newline included) of `candidate`, read back from `warcPath`; undefined when its
 * record says it is not HTML (a revisit of another type). A record that cannot be read back is listed
 * without a title when the index calls it HTML.
 */
export async function pageLine(
  candidate: PageCandidate,
  warcPath: string,
  seed: boolean,
): Promise<string | undefined> {
  const record = await readRecord(warcPath, candidate).catch(() => undefined);
  const http = record && httpPartsOf(record);
  if (candidate.revisit && !http?.html) return undefined;
  const title = http && !candidate.revisit ? titleOf(http.payload) : undefined;
  const page = {
    id: `${candidate.timestamp}/${candidate.url}`,
    url: candidate.url,
    ts: isoOf(candidate.timestamp),
    ...(title ? { title } : {}),
    ...(seed ? { seed: true } : {}),
  };
  return `${JSON.stringify(page)}\n`;
}

/** `yyyyMMddHHmmss` as ISO 8601. */
function isoOf(timestamp: string): string {
  const t = timestamp;
  return `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}Z`;
}

/** The record of a gzipped WARC file's member at the candidate's offset; undefined for other files. */
async function readRecord(warcPath: string, at: PageCandidate): Promise<Buffer | undefined> {
  if (warcFileCompression(warcPath) !== "gzip") return undefined;
  const handle = await open(warcPath, "r");
  try {
    const member = Buffer.alloc(at.length);
    const { bytesRead } = await handle.read(member, 0, at.length, at.offset);
    return gunzipSync(member.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** Whether a record's HTTP response is plain (not content-encoded) HTML, and its payload's start. */
function httpPartsOf(record: Buffer): { html: boolean; payload: Buffer } | undefined {
  const warcEnd = record.indexOf("\r\n\r\n");
  if (warcEnd < 0) return undefined;
  const httpEnd = record.indexOf("\r\n\r\n", warcEnd + 4);
  const headers = record.toString("latin1", warcEnd + 4, httpEnd < 0 ? record.length : httpEnd);
  const contentType = /\r\ncontent-type:[ \t]*([^\r\n;]*)/i.exec(headers)?.[1]?.trim().toLowerCase();
  const encoded = /\r\ncontent-encoding:[ \t]*(?!identity)\S/i.test(headers);
  const payloadStart = httpEnd < 0 ? record.length : httpEnd + 4;
  return {
    html: HTML_MIMES.has(contentType ?? "") && !encoded,
    payload: encoded ? Buffer.alloc(0) : record.subarray(payloadStart, payloadStart + TITLE_SEARCH_BYTES),
  };
}

/** The text of an HTML payload's first `<title>`, entities decoded, blanks collapsed. */
function titleOf(payload: Buffer): string | undefined {
  const match = /<title[^>]*>([^<]*)<\/title>/i.exec(payload.toString("utf8"));
  const title = match?.[1] && decodeEntities(match[1]).replace(/\s+/g, " ").trim();
  return title || undefined;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  mdash: "\u2014",
  ndash: "\u2013",
};

/** Decodes numeric entities and the common named ones; others are left as written. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code =
        name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
  });
}
