/**
 * Bytes to text for HTML, following the HTML encoding sniffing order in a reduced form: a BOM wins, then
 * the transport charset (Content-Type), then a `<meta charset>` in the first 1024 bytes, then UTF-8.
 * Only encodings Node's TextDecoder knows are honoured; invalid bytes become U+FFFD, never an error.
 */

import { TextDecoder } from "node:util";

/** How far into the document the `<meta>` charset prescan looks, in bytes (as the HTML standard does). */
const PRESCAN_BYTES = 1024;

// Covers both `<meta charset="x">` and `<meta http-equiv="Content-Type" content="text/html; charset=x">`.
const META_CHARSET = /<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i;

// Node 20's TextDecoder decodes windows-1252 (and its aliases latin1, ascii, …) as ISO-8859-1, leaving
// 0x80–0x9F as C1 controls; this maps them to the windows-1252 characters the Encoding standard specifies.
const WINDOWS_1252_C1 =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";
const C1_CONTROLS = /[\u0080-\u009f]/g;

function fixWindows1252(text: string): string {
  return text.replace(C1_CONTROLS, (ch) => WINDOWS_1252_C1[ch.charCodeAt(0) - 0x80] as string);
}

const decoders = new Map<string, TextDecoder>();

/** A cached non-fatal decoder for `label`, or `undefined` when TextDecoder does not know it. */
function decoderFor(label: string): TextDecoder | undefined {
  const key = label.trim().toLowerCase();
  let decoder = decoders.get(key);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(key, { fatal: false });
    } catch {
      return undefined;
    }
    decoders.set(key, decoder);
  }
  return decoder;
}

function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return undefined;
}

function prescanMetaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, PRESCAN_BYTES));
  const match = META_CHARSET.exec(head.toString("latin1"));
  return match?.[1];
}

/**
 * Decodes an HTML document's bytes. `transportCharset` is the `charset` parameter of the response's
 * Content-Type, when there was one.
 */
export function decodeHtml(bytes: Uint8Array, transportCharset?: string): string {
  const bom = bomEncoding(bytes);
  // The decoder strips the BOM itself.
  if (bom !== undefined) return (decoderFor(bom) as TextDecoder).decode(bytes);
  let decoder = transportCharset === undefined ? undefined : decoderFor(transportCharset);
  if (decoder === undefined) {
    const declared = prescanMetaCharset(bytes);
    decoder = declared === undefined ? undefined : decoderFor(declared);
    // A document cannot declare itself UTF-16 from inside: the standard reads that as UTF-8.
    if (decoder?.encoding.startsWith("utf-16")) decoder = undefined;
  }
  if (decoder === undefined) return (decoderFor("utf-8") as TextDecoder).decode(bytes);
  const text = decoder.decode(bytes);
  return decoder.encoding === "windows-1252" ? fixWindows1252(text) : text;
}
