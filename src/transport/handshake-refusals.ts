/**
 * Connections an agent's server refuses before any request: TLS handshakes that fail (a plaintext
 * client, no certificate, another CA's) and, on a plaintext server, clients that speak TLS. gRPC drops
 * them silently; the operator of the refusing agent gets one line per refusal with the peer's address,
 * rate-limited so that a flood of bad connections cannot fill the log.
 */

import type { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import type { Server } from "@grpc/grpc-js";
import type { Clock, TimerHandle } from "../clock.js";

/** @default of {@link RefusalLogOptions.maxLinesPerWindow}. */
export const DEFAULT_MAX_REFUSAL_LINES = 10;
/** @default of {@link RefusalLogOptions.windowMs}. */
export const DEFAULT_REFUSAL_WINDOW_MS = 60_000;

/** Options of a {@link RefusalLog}. */
export interface RefusalLogOptions {
  /** Lines written per window at most; further refusals are only counted. @default 10 */
  readonly maxLinesPerWindow?: number;
  /** Length of a window, in ms. @default 60000 */
  readonly windowMs?: number;
}

/** The parts of a refusal line: one refusal, or how many were only counted. */
export type RefusalFields =
  | { readonly peer: string; readonly reason: string; readonly what: string }
  | { readonly suppressed: number };

/** What a {@link RefusalLog} writes with. */
export interface RefusalLogDeps {
  readonly clock: Clock;
  /**
   * Writes one line (no newline), with its parts for a structured log: the refused peer and the reason,
   * or the count of refusals not written one by one.
   */
  readonly write: (line: string, fields: RefusalFields) => void;
}

/**
 * One line per refused connection, at most `maxLinesPerWindow` per window; the refusals past that are
 * summed up in one line when the window ends.
 */
export class RefusalLog {
  readonly #maxLines: number;
  readonly #windowMs: number;
  readonly #deps: RefusalLogDeps;
  #windowEndsAtMs = 0;
  #linesInWindow = 0;
  #suppressed = 0;
  #summaryTimer: TimerHandle | undefined;

  constructor(options: RefusalLogOptions, deps: RefusalLogDeps) {
    this.#maxLines = options.maxLinesPerWindow ?? DEFAULT_MAX_REFUSAL_LINES;
    this.#windowMs = options.windowMs ?? DEFAULT_REFUSAL_WINDOW_MS;
    this.#deps = deps;
  }

  /**
   * Logs (or counts) that `what` (a "connection", a "TLS handshake") from `peer` (`host:port`) was
   * refused for `reason`.
   */
  refused(peer: string, reason: string, what = "connection"): void {
    const now = this.#deps.clock.now();
    if (now >= this.#windowEndsAtMs) {
      this.#flush();
      this.#windowEndsAtMs = now + this.#windowMs;
      this.#linesInWindow = 0;
    }
    if (this.#linesInWindow < this.#maxLines) {
      this.#linesInWindow++;
      this.#write(`refused a ${what} from ${peer}: ${reason}`, { peer, reason, what });
      return;
    }
    this.#suppressed++;
    this.#summaryTimer ??= this.#deps.clock.setTimeout(() => {
      this.#summaryTimer = undefined;
      this.#flush();
    }, this.#windowEndsAtMs - now);
  }

  /** Writes the count of refusals not logged yet, and cancels the pending summary. */
  stop(): void {
    if (this.#summaryTimer !== undefined) this.#deps.clock.clearTimeout(this.#summaryTimer);
    this.#summaryTimer = undefined;
    this.#flush();
  }

  #flush(): void {
    if (this.#suppressed === 0) return;
    const count = this.#suppressed;
    this.#suppressed = 0;
    this.#write(
      `refused ${count} more connection${count === 1 ? "" : "s"} in the last ${Math.round(this.#windowMs / 1000)} s ` +
        `(at most ${this.#maxLines} logged one by one per window)`,
      { suppressed: count },
    );
  }

  #write(line: string, fields: RefusalFields): void {
    try {
      this.#deps.write(line, fields);
    } catch {
      // A failing log must not break the server.
    }
  }
}

/**
 * Why a TLS handshake with a client failed, in words, from Node's `tlsClientError` and the socket's
 * `authorizationError` (a client certificate that failed verification only shows there: Node then
 * closes the socket, and the error is a mere "socket hang up").
 */
export function describeTlsRefusal(error: Error & { code?: string }, authorizationError?: unknown): string {
  if (typeof authorizationError === "string" && authorizationError !== "") {
    if (authorizationError === "CERT_HAS_EXPIRED") return "its certificate has expired (CERT_HAS_EXPIRED)";
    return (
      `its certificate is not signed by this cluster's CA (${authorizationError}): it belongs to another ` +
      "cluster, or was issued by another 'ubicrawl certs' folder"
    );
  }
  const code = error.code ?? "";
  if (/WRONG_VERSION_NUMBER|HTTP_REQUEST|UNKNOWN_PROTOCOL|PACKET_LENGTH_TOO_LONG/.test(code)) {
    return "it spoke plaintext, but this agent uses TLS (is it running with --insecure?)";
  }
  if (/PEER_DID_NOT_RETURN_A_CERTIFICATE/.test(code)) {
    return "it showed no certificate (agents and operators need one signed by the cluster CA: --tls-cert, --tls-key)";
  }
  if (/CERTIFICATE_VERIFY_FAILED/.test(code)) {
    return "its certificate is not signed by this cluster's CA (--tls-ca): it belongs to another cluster";
  }
  if (/ALERT_UNKNOWN_CA|ALERT_BAD_CERTIFICATE|ALERT_CERTIFICATE_UNKNOWN/.test(code)) {
    return "it refused this agent's certificate (not signed by the CA it trusts: another cluster's --tls-ca?)";
  }
  if (code === "ERR_TLS_HANDSHAKE_TIMEOUT") return "no TLS handshake in time";
  if (code === "ECONNRESET" || code === "EPIPE") return "it closed the connection during the TLS handshake";
  return `TLS handshake failed: ${error.message.split("\n")[0]?.trim() ?? code}`;
}

/** The `host:port` of a socket's peer, or "an unknown address" once it is gone. */
function peerOf(socket: Partial<Pick<Socket, "remoteAddress" | "remotePort">> | undefined): string {
  const host = socket?.remoteAddress;
  if (host === undefined) return "an unknown address";
  return host.includes(":") ? `[${host}]:${socket?.remotePort}` : `${host}:${socket?.remotePort}`;
}

/**
 * Makes `server` report refused connections to `log`: failed TLS handshakes when `secure`, clients
 * that speak TLS to it otherwise. It reaches into grpc-js's HTTP/2 servers, which grpc-js does not
 * expose; when that is not possible (another grpc-js), nothing is reported and nothing else changes.
 */
export function watchRefusals(server: Server, secure: boolean, log: RefusalLog): void {
  const internals = server as unknown as { createHttp2Server?: (...args: unknown[]) => EventEmitter };
  const create = internals.createHttp2Server;
  if (typeof create !== "function") return;
  internals.createHttp2Server = function (this: unknown, ...args: unknown[]): EventEmitter {
    const http2Server = create.apply(this, args);
    if (secure) {
      // A TLS socket that failed may be gone already: its peer is read off the TCP socket beneath,
      // noted when it connected.
      const peers = new WeakMap<object, string>();
      http2Server.on("connection", (raw: Socket) => peers.set(raw, peerOf(raw)));
      http2Server.on("tlsClientError", (error: Error & { code?: string }, socket: Socket) => {
        const raw = (socket as Socket & { _parent?: object })._parent;
        const peer = (raw === undefined ? undefined : peers.get(raw)) ?? peerOf(socket);
        log.refused(
          peer,
          describeTlsRefusal(error, (socket as { authorizationError?: unknown }).authorizationError),
          "TLS handshake",
        );
      });
    } else {
      // The peer's address is read when its session starts: once its bytes are refused it is gone.
      const peers = new WeakMap<object, string>();
      http2Server.on("session", (session: { socket?: Socket }) => {
        peers.set(session, peerOf(session.socket));
      });
      http2Server.on("sessionError", (error: Error, session: object) => {
        if (!/bad client magic/i.test(error.message)) return;
        log.refused(
          peers.get(session) ?? "an unknown address",
          "it did not speak plaintext HTTP/2 (a TLS client? this agent runs with --insecure)",
        );
      });
    }
    return http2Server;
  };
}
