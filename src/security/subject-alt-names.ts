/**
 * The names a certificate is valid for. gRPC clients check the server's certificate against the
 * address they dial, so every address agents are reached at must be listed (IPs as IP SANs).
 */

import { isIP } from "node:net";
import { ErrorCode, UbiError } from "../errors.js";

/** Hosts an agent certificate covers by default: the loopback addresses and name. */
export const DEFAULT_CERT_HOSTS: readonly string[] = Object.freeze(["127.0.0.1", "::1", "localhost"]);

/** Longest DNS name accepted, in characters (RFC 1035). */
const MAX_DNS_NAME_CHARS = 253;
/** One DNS label: letters, digits, inner hyphens, at most 63 characters. */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Checks `hosts` (IP literals or DNS names, `[::1]` brackets allowed) and returns them as an
 * openssl `subjectAltName` value, e.g. `IP:127.0.0.1,DNS:localhost`; duplicates are dropped.
 */
export function subjectAltNames(hosts: readonly string[]): string {
  if (hosts.length === 0) throw bad("at least one host name or IP address is needed");
  const entries = new Set<string>();
  for (const raw of hosts) {
    const host = raw
      .trim()
      .toLowerCase()
      .replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) !== 0) {
      entries.add(`IP:${host}`);
      continue;
    }
    const name = host.endsWith(".") ? host.slice(0, -1) : host;
    if (name.length === 0 || name.length > MAX_DNS_NAME_CHARS || !name.split(".").every(isLabel)) {
      throw bad(`"${raw}" is neither an IP address nor a valid DNS name`);
    }
    entries.add(`DNS:${name}`);
  }
  return [...entries].join(",");
}

function isLabel(label: string): boolean {
  return DNS_LABEL.test(label);
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}
