/**
 * Cheap views of a canonical URL (the output of `normalizeUrl`): its host key and its origin, cut out of
 * the string without building a URL object. Canonical URLs have no user info and always a path, so the
 * authority runs from after `://` to the first `/`.
 */

/** Index just past `://` in a canonical `http://` or `https://` URL. */
function authorityStart(canonicalUrl: string): number {
  // "http:" has its colon at index 4, "https:" at 5.
  return canonicalUrl.charCodeAt(4) === 0x3a ? 7 : 8;
}

function authorityEnd(canonicalUrl: string, start: number): number {
  const slash = canonicalUrl.indexOf("/", start);
  return slash === -1 ? canonicalUrl.length : slash;
}

/**
 * The politeness and assignment key of a canonical URL: the host plus `:port` when the port is not the
 * scheme's default (WHATWG `url.host`), e.g. `example.org` or `127.0.0.1:8080`.
 */
export function hostKey(canonicalUrl: string): string {
  const start = authorityStart(canonicalUrl);
  return canonicalUrl.slice(start, authorityEnd(canonicalUrl, start));
}

/** The origin of a canonical URL: `scheme://host[:port]`, e.g. for its robots.txt. */
export function originOf(canonicalUrl: string): string {
  return canonicalUrl.slice(0, authorityEnd(canonicalUrl, authorityStart(canonicalUrl)));
}

/** The host name of a host key, without its port (`[::1]:8080` → `[::1]`). */
export function hostnameOf(key: string): string {
  const colon = key.lastIndexOf(":");
  // In an IPv6 literal the colons are inside the brackets; a port colon comes after `]`.
  if (colon === -1 || colon < key.lastIndexOf("]")) return key;
  return key.slice(0, colon);
}
