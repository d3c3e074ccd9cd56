import { ErrorCode, isUbiError } from "../errors.js";
import type { Logger } from "../logging/index.js";
import { hostnameOf } from "../url/index.js";
import type { CrawlStats } from "./crawl-stats.js";
import type { HostRuntime } from "./host-runtime.js";

/** What {@link currentAddress} asks and tells. */
export interface HostAddressDeps {
  /** The agent's resolver (the hosts file, or the system's, cached with a TTL): a name's first address. */
  readonly resolve: (hostname: string, signal: AbortSignal) => Promise<string>;
  /** Where unresolved hosts and moves are counted. */
  readonly stats: Pick<CrawlStats, "unresolvedHostsThisRun" | "addressChangesThisRun">;
  /** Where a move is told. */
  readonly logger: Logger;
}

/**
 * The address `host`'s next request is counted at (per-IP limits, spacing, back-off) and sent to: the
 * resolver is asked again for each request — its cache makes that cheap —, so a host whose address
 * changed (a hosts file edited, a DNS answer expired) moves to its new address's limits at its next
 * request. A name with several addresses stands for its first, as `dns.lookup` answers. The address
 * is kept in `state.ip`; a move is logged (`host-address-changed`) and counted. Undefined when the
 * host cannot be resolved: `state.dnsError` says why, and it is not asked again this run.
 */
export async function currentAddress(
  host: string,
  state: HostRuntime,
  signal: AbortSignal,
  deps: HostAddressDeps,
): Promise<string | undefined> {
  if (state.dnsError !== undefined) return undefined;
  let ip: string;
  try {
    ip = await deps.resolve(hostnameOf(host), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    state.dnsError = isUbiError(error) ? error.code : ErrorCode.DnsNotFound;
    if (state.dnsError === ErrorCode.DnsNotFound) deps.stats.unresolvedHostsThisRun++;
    return undefined;
  }
  const previous = state.ip;
  if (previous !== undefined && previous !== ip) {
    deps.stats.addressChangesThisRun++;
    deps.logger.info(
      { event: "host-address-changed", host, from: previous, to: ip },
      `${host} moved from ${previous} to ${ip}: its requests are counted there from now on`,
    );
  }
  state.ip = ip;
  return ip;
}
