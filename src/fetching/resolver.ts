import { isIP } from "node:net";

/** Turns a host name into one IP address; the fetcher asks it at connect time for every new connection. */
export interface Resolver {
  /** Resolves `hostname` (or an IP literal, `[::1]` included) to one IP, or rejects with `DnsNotFound`. */
  resolve(hostname: string, signal?: AbortSignal): Promise<string>;
}

/**
 * Returns the IP when `hostname` is an IP literal (brackets of `[::1]` removed), else `undefined`.
 * Literals never reach a hosts file or DNS.
 */
export function ipLiteral(hostname: string): string | undefined {
  const bare =
    hostname.length > 1 && hostname.charCodeAt(0) === 91 /* [ */ && hostname.endsWith("]")
      ? hostname.slice(1, -1)
      : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/** Lowercases a host name and drops one trailing dot, the form both resolvers key their tables by. */
export function hostKey(hostname: string): string {
  const lower = hostname.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}
