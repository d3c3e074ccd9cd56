/**
 * URL canonicalization: one URL, one string. Two spellings of the same resource must give the same
 * string, because the seen set, the owner computation and politeness all key on it.
 */

import { fastNormalizeAbsolute, fastNormalizeRelative } from "./fast-path.js";
import { normalizePercentEscapes } from "./percent.js";

/** Longest canonical URL accepted, in characters; longer ones are crawler traps more often than pages. */
export const MAX_URL_LENGTH = 4096;

/** Raw input longer than this is rejected before parsing, so a megabyte-long `href` costs nothing. */
const MAX_RAW_LENGTH = 16 * MAX_URL_LENGTH;

/**
 * Resolves `raw` against `base` with WHATWG URL semantics and returns the canonical absolute URL, or
 * `null` when it is invalid, not http(s), carries credentials, or is longer than {@link MAX_URL_LENGTH}.
 *
 * Canonical means: lowercase scheme and host, IDN host in punycode, no default port, dot segments
 * resolved, no fragment, unreserved escapes decoded and other escapes uppercased, `/` for an empty path,
 * no empty `?`, surrounding whitespace/control characters trimmed and tabs/newlines removed, `\` read as
 * `/` (as browsers do). Query parameter order is kept. URLs with a user name or password are rejected
 * rather than stripped: they are rare in links and stripping would merge distinct resources.
 * A `base` that is not a valid URL is ignored (an absolute `raw` still normalizes).
 */
export function normalizeUrl(raw: string, base?: string): string | null {
  const fast = base === undefined ? fastNormalizeAbsolute(raw) : fastNormalize(raw, base);
  if (fast !== undefined && fast.length <= MAX_URL_LENGTH) return fast;
  return normalizeUrlSlow(raw, base);
}

const HTTP_SCHEME = /^https?:\/\//i;

function fastNormalize(raw: string, base: string): string | undefined {
  // `http:` followed by `//` ignores the base entirely; anything else with a scheme goes slow.
  if (HTTP_SCHEME.test(raw)) return fastNormalizeAbsolute(raw);
  return fastNormalizeRelative(raw, base);
}

/** {@link normalizeUrl} without the fast path: always a full WHATWG parse. Exposed for tests. */
export function normalizeUrlSlow(raw: string, base?: string): string | null {
  if (raw.length > MAX_RAW_LENGTH) return null;
  const url = parse(raw, base);
  if (url === null) return null;
  const protocol = url.protocol;
  if (protocol !== "http:" && protocol !== "https:") return null;
  if (url.username !== "" || url.password !== "") return null;
  // `search` is "" for both no query and an empty one, which drops the lone `?`.
  const search = url.search;
  const canonical = `${protocol}//${url.host}${normalizePercentEscapes(url.pathname)}${
    search.length === 0 ? "" : normalizePercentEscapes(search)
  }`;
  return canonical.length <= MAX_URL_LENGTH ? canonical : null;
}

function parse(raw: string, base: string | undefined): URL | null {
  try {
    return base === undefined ? new URL(raw) : new URL(raw, base);
  } catch {
    if (base === undefined) return null;
  }
  // WHATWG rejects everything when the base is invalid; we ignore the base instead.
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}
