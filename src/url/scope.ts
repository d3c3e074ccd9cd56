/** Crawl scope: which hosts a crawl is allowed to enter. */

import { hostnameOf } from "./host-key.js";

/**
 * True when `scopes` is empty, or the host name of `hostKey` (port ignored) equals one of the scope
 * domains or is a subdomain of one (`a.b.example.org` is under `example.org`, `badexample.org` is not).
 * Scopes are compared as given, so pass them in canonical form: lowercase, IDN in punycode, no trailing
 * dot. IP addresses only match exactly.
 */
export function inScope(hostKey: string, scopes: readonly string[]): boolean {
  if (scopes.length === 0) return true;
  const hostname = hostnameOf(hostKey);
  // Canonical hosts ending in a digit are IPv4 (WHATWG parses numeric last labels as addresses).
  const last = hostname.charCodeAt(hostname.length - 1);
  const isAddress = hostname.charCodeAt(0) === 0x5b || (last >= 0x30 && last <= 0x39);
  for (const scope of scopes) {
    if (scope.length === 0) continue;
    if (hostname === scope) return true;
    if (
      !isAddress &&
      hostname.length > scope.length &&
      hostname.endsWith(scope) &&
      hostname.charCodeAt(hostname.length - scope.length - 1) === 0x2e
    ) {
      return true;
    }
  }
  return false;
}
