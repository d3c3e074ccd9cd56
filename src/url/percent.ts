/**
 * Percent-escape normalization (RFC 3986 §6.2.2.2): WHATWG URL parsing leaves escapes as written, so
 * `%7e`, `%7E` and `~` would otherwise be three different URLs to the seen set.
 */

const ESCAPE = /%([0-9A-Fa-f]{2})/g;

/** True for RFC 3986 unreserved bytes: ALPHA, DIGIT, `-`, `.`, `_`, `~`. */
function isUnreserved(byte: number): boolean {
  return (
    (byte >= 0x61 && byte <= 0x7a) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2e ||
    byte === 0x5f ||
    byte === 0x7e
  );
}

function replaceEscape(match: string, hex: string): string {
  const byte = Number.parseInt(hex, 16);
  if (isUnreserved(byte)) return String.fromCharCode(byte);
  // Already uppercase: hand back the same string, no allocation.
  return match === match.toUpperCase() ? match : `%${hex.toUpperCase()}`;
}

/**
 * Decodes escapes of unreserved characters and uppercases every other escape; a `%` not followed by two
 * hex digits is left alone (WHATWG keeps it literally too).
 */
export function normalizePercentEscapes(text: string): string {
  // Most paths carry no escape at all: skip the regex machinery for them.
  if (text.indexOf("%") === -1) return text;
  return text.replace(ESCAPE, replaceEscape);
}
