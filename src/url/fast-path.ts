/**
 * The fast path of {@link normalizeUrl}: plain-ASCII http(s) URLs and relative references against such a
 * base are handled with one regex and string work instead of a WHATWG parse, including what links often
 * carry: an upper-case scheme or host, a default port, a fragment, an empty query, `.`/`..` segments, `%XX`
 * escapes and network-path (`//host/…`) references. Anything unusual (IDN, IP-looking hosts, escaped dots,
 * stray `%`, odd characters) answers `undefined` so the slow path decides; the tests check both paths
 * agree on a corpus.
 */

import { normalizePercentEscapes } from "./percent.js";

// Host: LDH labels, no empty label, no trailing dot. Path: RFC 3986 pchar, `%` only as a whole escape.
// Query: the same plus `/` and `?`, minus `'` (WHATWG escapes `'` in special-scheme queries). Fragment:
// anything.
const ABSOLUTE =
  /^([hH][tT][tT][pP][sS]?):\/\/([a-zA-Z0-9][a-zA-Z0-9-]*(?:\.[a-zA-Z0-9-]+)*)(?::(\d{1,5}))?(\/(?:[\w\-.~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*)?(\?(?:[\w\-.~!$&()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?(?:#[\s\S]*)?$/;

// A relative reference without `:` (which could start a scheme), `\`, a stray `%` or whitespace.
const RELATIVE =
  /^((?:[\w\-.~!$&'()*+,;=@/]|%[0-9A-Fa-f]{2})*)(\?(?:[\w\-.~!$&()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?(?:#[\s\S]*)?$/;

// WHATWG reads `%2e` as a dot in dot segments: such paths go to the slow path.
const ESCAPED_DOT = /%2e/i;

const CODE_0 = 0x30;
const CODE_9 = 0x39;
const SLASH = 0x2f;

/** The parts of a base URL that relative resolution needs. */
interface FastBase {
  readonly href: string;
  /** `scheme://host[:port]` */
  readonly origin: string;
  readonly path: string;
  /** The path up to and including its last `/`. */
  readonly directory: string;
  /** `?query` or the empty string. */
  readonly query: string;
}

/** The crawler resolves ~20 links per page against the same base: remember the last one checked. */
let lastBaseHref: string | undefined;
let lastBase: FastBase | undefined;

/** Canonical form of an absolute http(s) URL, or `undefined` when the slow path must decide. */
export function fastNormalizeAbsolute(raw: string): string | undefined {
  const match = ABSOLUTE.exec(raw);
  if (match === null) return undefined;
  // WHATWG lowercases the scheme and ASCII hosts.
  const scheme = (match[1] as string).toLowerCase();
  const host = (match[2] as string).toLowerCase();
  const port = match[3];
  const path = match[4];
  const query = match[5];

  // A numeric-looking last label makes WHATWG parse the host as IPv4 (or reject it); `xn--` labels need
  // punycode validation.
  const lastLabelStart = host.charCodeAt(host.lastIndexOf(".") + 1);
  if (lastLabelStart >= CODE_0 && lastLabelStart <= CODE_9) return undefined;
  if (host.includes("xn--")) return undefined;

  let portPart = "";
  if (port !== undefined) {
    if (port.charCodeAt(0) === CODE_0) return undefined;
    const portNumber = Number(port);
    if (portNumber > 65535) return undefined;
    const defaultPort = scheme === "http" ? 80 : 443;
    if (portNumber !== defaultPort) portPart = `:${port}`;
  }

  const pathPart = path === undefined ? "/" : canonicalPath(path);
  if (pathPart === undefined) return undefined;
  return `${scheme}://${host}${portPart}${pathPart}${canonicalQuery(query)}`;
}

/** A matched path with dot segments resolved and escapes normalized; `undefined` for escaped dots. */
function canonicalPath(path: string): string | undefined {
  if (path.indexOf("%") !== -1) {
    if (ESCAPED_DOT.test(path)) return undefined;
    return normalizePercentEscapes(path.includes("/.") ? removeDotSegments(path) : path);
  }
  return path.includes("/.") ? removeDotSegments(path) : path;
}

/** `?query` with escapes normalized, or "" for none or an empty one. */
function canonicalQuery(query: string | undefined): string {
  if (query === undefined || query.length === 1) return "";
  return normalizePercentEscapes(query);
}

/**
 * WHATWG path parsing for an absolute path of a special URL: `.` segments vanish, `..` removes the
 * segment before it (never past the root), and a path ending in either keeps a trailing `/`.
 */
export function removeDotSegments(path: string): string {
  const segments = path.slice(1).split("/");
  const out: string[] = [];
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i] as string;
    if (segment === "..") {
      out.pop();
      if (i === last) out.push("");
    } else if (segment === ".") {
      if (i === last) out.push("");
    } else {
      out.push(segment);
    }
  }
  return `/${out.join("/")}`;
}

function fastBase(base: string): FastBase | undefined {
  if (base === lastBaseHref) return lastBase;
  let parsed: FastBase | undefined;
  if (fastNormalizeAbsolute(base) === base) {
    // Canonical, so it has a path and no fragment.
    const pathStart = base.indexOf("/", base.indexOf("//") + 2);
    const queryStart = base.indexOf("?", pathStart);
    const path = queryStart === -1 ? base.slice(pathStart) : base.slice(pathStart, queryStart);
    parsed = {
      href: base,
      origin: base.slice(0, pathStart),
      path,
      directory: path.slice(0, path.lastIndexOf("/") + 1),
      query: queryStart === -1 ? "" : base.slice(queryStart),
    };
  }
  lastBaseHref = base;
  lastBase = parsed;
  return parsed;
}

/** Canonical form of `raw` resolved against `base`, or `undefined` when the slow path must decide. */
export function fastNormalizeRelative(raw: string, base: string): string | undefined {
  if (raw.charCodeAt(0) === SLASH && raw.charCodeAt(1) === SLASH) {
    // A network-path reference: a new authority under the base's scheme.
    const origin = fastBase(base)?.origin;
    return origin === undefined
      ? undefined
      : fastNormalizeAbsolute(origin.slice(0, origin.indexOf(":") + 1) + raw);
  }
  const match = RELATIVE.exec(raw);
  if (match === null) return undefined;
  const resolved = fastBase(base);
  if (resolved === undefined) return undefined;
  const path = match[1] as string;
  const query = match[2];

  if (path.length === 0) {
    // Query-only or fragment-only reference: the base path stays, and so does its query unless replaced.
    return `${resolved.origin}${resolved.path}${query === undefined ? resolved.query : canonicalQuery(query)}`;
  }
  const fullPath = canonicalPath(path.charCodeAt(0) === SLASH ? path : `${resolved.directory}${path}`);
  if (fullPath === undefined) return undefined;
  return `${resolved.origin}${fullPath}${canonicalQuery(query)}`;
}
