/**
 * The fast path of {@link normalizeUrl}: plain-ASCII URLs that are canonical already (or become so by
 * dropping a fragment, an empty query or a default port), and simple relative references against such a
 * base, are handled with one regex and string concatenation instead of a WHATWG parse. Anything unusual
 * (escapes, dot segments, upper case, IDN, IP-looking hosts, odd characters) answers `undefined` so the
 * slow path decides; the tests check both paths agree on a corpus.
 */

// Host: lowercase LDH labels, no empty label, no trailing dot. Path: RFC 3986 pchar minus `%`. Query: the
// same plus `/` and `?`, minus `'` (WHATWG escapes `'` in special-scheme queries). Fragment: anything.
const ABSOLUTE =
  /^(https?):\/\/([a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*)(?::(\d{1,5}))?(\/[\w\-.~!$&'()*+,;=:@/]*)?(\?[\w\-.~!$&()*+,;=:@/?]*)?(?:#[\s\S]*)?$/;

// A relative reference without `:` (which could start a scheme), `\`, `%` or whitespace.
const RELATIVE = /^([\w\-.~!$&'()*+,;=@/]*)(\?[\w\-.~!$&()*+,;=:@/?]*)?(?:#[\s\S]*)?$/;

const CODE_0 = 0x30;
const CODE_9 = 0x39;

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
  const scheme = match[1] as string;
  const host = match[2] as string;
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

  if (path?.includes("/.")) return undefined;
  const pathPart = path === undefined ? "/" : path;
  const queryPart = query === undefined || query.length === 1 ? "" : query;
  return `${scheme}://${host}${portPart}${pathPart}${queryPart}`;
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
  const match = RELATIVE.exec(raw);
  if (match === null) return undefined;
  const resolved = fastBase(base);
  if (resolved === undefined) return undefined;
  const path = match[1] as string;
  const query = match[2];
  const queryPart = query === undefined || query.length === 1 ? "" : query;

  if (path.length === 0) {
    // Query-only or fragment-only reference: the base path stays, and so does its query unless replaced.
    return `${resolved.origin}${resolved.path}${query === undefined ? resolved.query : queryPart}`;
  }
  // Network-path references (`//host`) and dot segments are the slow path's business.
  if (path.charCodeAt(0) === 0x2e || path.includes("/.") || path.startsWith("//")) return undefined;
  const fullPath = path.charCodeAt(0) === 0x2f ? path : `${resolved.directory}${path}`;
  return `${resolved.origin}${fullPath}${queryPart}`;
}
