import { ErrorCode } from "../errors.js";
import type { Logger } from "../logging/index.js";
import { HostPace } from "./host-pace.js";

/** In-memory, per-host facts of the current run. */
export interface HostRuntime {
  /** The host's address, once resolved this run. */
  ip?: string;
  /** Why the host cannot be reached this run: a DNS miss, or an address --allow-net refuses. */
  dnsError?: ErrorCode;
  /**
   * Origins (`https://host[:port]`) whose TLS handshake failed this run: their URLs fail at once as
   * `TlsFailed`, and are never fetched over plain HTTP instead. Per origin, since the host's `http:` URLs
   * are not concerned.
   */
  tlsFailed?: Set<string>;
  /** When the next request may start, and why (this agent's delay, Crawl-delay, a server's push-back). */
  readonly pace: HostPace;
  /** Fresh robots.txt answers in a row that said unavailable (the host is given up at the maximum). */
  robotsAttempts: number;
  /** URLs given up in a row after transient failures: a host that keeps failing gets no more retries. */
  failedInARow: number;
}

/** The hosts' facts of this run, each made on its first use. */
export class HostRuntimes {
  private readonly byHost = new Map<string, HostRuntime>();

  /** `host`'s facts of this run. */
  of(host: string): HostRuntime {
    let state = this.byHost.get(host);
    if (!state) {
      state = { pace: new HostPace(), robotsAttempts: 0, failedInARow: 0 };
      this.byHost.set(host, state);
    }
    return state;
  }
}

/**
 * `origin`'s TLS handshake failed (its certificate could not be verified, or TLS itself failed): its
 * queued URLs fail at once from now on, and the operator is told why, once per origin.
 */
export function markTlsFailed(
  state: HostRuntime,
  where: { readonly host: string; readonly origin: string },
  reason: string | undefined,
  logger: Logger,
): void {
  state.tlsFailed ??= new Set();
  if (state.tlsFailed.has(where.origin)) return;
  state.tlsFailed.add(where.origin);
  logger.warn(
    { event: "tls-failed", host: where.host, origin: where.origin, reason },
    `${where.origin}: TLS failed (${reason ?? "no reason given"}); its URLs fail as ${ErrorCode.TlsFailed}, never fetched over plain HTTP`,
  );
}
