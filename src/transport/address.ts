/**
 * `host:port` parsing for agent addresses and listen addresses. Hosts are DNS names, IPv4 literals
 * or bracketed IPv6 literals (`[::1]:7000`), as gRPC targets expect them.
 */

import { isIPv4, isIPv6 } from "node:net";
import { MAX_ADDRESS_CHARS } from "./limits.js";

/** A parsed `host:port`; `host` keeps no brackets. */
export interface HostPort {
  /** DNS name or IP literal, IPv6 without brackets. */
  host: string;
  /** TCP port, 0 to 65535. */
  port: number;
}

const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?$/;

/** Parses `host:port`; undefined when malformed. Port 0 is accepted only with `allowPortZero`. */
export function parseHostPort(text: string, allowPortZero = false): HostPort | undefined {
  if (text.length > MAX_ADDRESS_CHARS) return undefined;
  const colon = text.lastIndexOf(":");
  if (colon <= 0) return undefined;
  let host = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port > 65_535 || (port === 0 && !allowPortZero)) return undefined;
  if (host.startsWith("[")) {
    if (!host.endsWith("]")) return undefined;
    host = host.slice(1, -1);
    return isIPv6(host) ? { host, port } : undefined;
  }
  // An unbracketed colon would make the port ambiguous.
  if (host.includes(":")) return undefined;
  return isIPv4(host) || DNS_NAME.test(host) ? { host, port } : undefined;
}

/** Formats a {@link HostPort} back to `host:port`, bracketing IPv6 literals. */
export function formatHostPort({ host, port }: HostPort): string {
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}
