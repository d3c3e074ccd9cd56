/**
 * gRPC reports every failed TLS handshake as "UNAVAILABLE: Failed to connect". These probes redo the
 * handshake with plain `tls` (or the HTTP/2 preface, for a plaintext agent) and say what went wrong in
 * words an operator can act on, and whether waiting can help (an agent not up yet) or not (another
 * cluster's CA, TLS against plaintext).
 */

import { connect as connectTcp, isIP } from "node:net";
import { connect, type TLSSocket } from "node:tls";
import { ErrorCode, UbiError } from "../errors.js";
import { type MutualTlsTransport, parseHostPort, type TransportSecurity } from "../transport/index.js";

/** How long the probe waits for the connection and the server's verdict, in ms. */
export const DEFAULT_DIAGNOSE_TIMEOUT_MS = 3000;

/** Why a probe failed, for callers that branch on it. */
export type TlsProblem =
  | "unreachable"
  | "not-tls"
  | "tls-only"
  | "untrusted-server"
  | "wrong-server-name"
  | "client-refused"
  | "timeout";

/** What a probe found; `ok` means the server accepted our certificate and we accepted its. */
export type TlsDiagnosis =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Which side is at fault. */
      readonly problem: TlsProblem;
      /** One sentence for the operator: the cause and what to do. */
      readonly message: string;
      /** A few words for a progress line, e.g. "connection refused". */
      readonly reason: string;
      /** True when the failure may pass by itself (nothing listens yet, no answer in time). */
      readonly retryable: boolean;
    };

type Failure = Exclude<TlsDiagnosis, { ok: true }>;

const ERRNO_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  ENOTFOUND: "name not found",
  EAI_AGAIN: "name lookup failed",
};

/** The failure of a connection that could not be made, or undefined when `code` is not one. */
function unreachable(address: string, code: string): Failure | undefined {
  const reason = ERRNO_REASONS[code];
  if (reason === undefined) return undefined;
  return {
    ok: false,
    problem: "unreachable",
    reason,
    message: `cannot connect to ${address} (${reason}): is an agent running there, and is the address right?`,
    retryable: true,
  };
}

function timedOut(address: string, timeoutMs: number): Failure {
  return {
    ok: false,
    problem: "timeout",
    reason: `no answer within ${timeoutMs} ms`,
    message: `${address} did not answer within ${timeoutMs} ms`,
    retryable: true,
  };
}

function target(address: string): { host: string; port: number } {
  const parsed = parseHostPort(address);
  if (parsed === undefined) {
    throw new UbiError(ErrorCode.InvalidArgument, `address must be host:port, got ${address}`);
  }
  return parsed;
}

/**
 * Connects to `address` (`host:port`) with `security`'s CA, certificate and key, as a gRPC client
 * would, checking the server's certificate against `serverName` (by default the address's host), and
 * explains a failure. Never throws for network reasons; `InvalidArgument` for a bad address.
 */
export function diagnoseTls(
  address: string,
  security: MutualTlsTransport,
  timeoutMs = DEFAULT_DIAGNOSE_TIMEOUT_MS,
  serverName?: string,
): Promise<TlsDiagnosis> {
  const { host: dialed, port } = target(address);
  const host = serverName ?? dialed;
  return new Promise((resolve) => {
    let socket: TLSSocket | undefined;
    let settled = false;
    const finish = (diagnosis: TlsDiagnosis, gently = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (gently && socket) closeGently(socket);
      else socket?.destroy();
      resolve(diagnosis);
    };
    const fail = (problem: TlsProblem, reason: string, message: string, gently = false) =>
      finish({ ok: false, problem, reason, message, retryable: false }, gently);
    const timer = setTimeout(() => finish(timedOut(address, timeoutMs)), timeoutMs);
    socket = connect({
      host: dialed,
      port,
      ca: security.caPem,
      cert: security.certPem,
      key: security.keyPem,
      ALPNProtocols: ["h2"],
      // SNI must be a name; IPs are still checked against the certificate's IP SANs below.
      ...(isIP(host) === 0 ? { servername: host } : {}),
      // Judged by hand below, to tell an unknown CA from a wrong name.
      rejectUnauthorized: false,
    });
    socket.once("secureConnect", () => {
      const tls = socket as TLSSocket;
      // Node folds the name check into `authorized`; its error code tells the two causes apart.
      const reason = tls.authorizationError as (Error & { code?: string }) | string | null | undefined;
      const reasonCode = typeof reason === "object" && reason !== null ? reason.code : String(reason);
      if (!tls.authorized && reasonCode === "ERR_TLS_CERT_ALTNAME_INVALID") {
        fail(
          "wrong-server-name",
          "certificate not valid for this address",
          `the certificate of ${address} is not valid for ${host} (${String(reason)}); ` +
            `issue it with 'ubicrawl certs --hosts ${host},...'`,
          true,
        );
        return;
      }
      if (!tls.authorized) {
        fail(
          "untrusted-server",
          "certificate of another CA",
          `${address} shows a certificate not signed by our CA (${String(reasonCode)}): ` +
            "it belongs to another cluster, or --tls-ca is the wrong file",
          true,
        );
        return;
      }
      // The server judges our certificate after the handshake: its HTTP/2 SETTINGS mean accepted,
      // an alert means refused.
      tls.once("data", () => finish({ ok: true }));
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code ?? "";
      const cannotConnect = unreachable(address, code);
      if (cannotConnect) {
        finish(cannotConnect);
      } else if (/ALERT/.test(code)) {
        fail(
          "client-refused",
          "our certificate refused",
          `${address} refused our certificate (${error.message.trim()}): it is not signed by that agent's CA`,
        );
      } else if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|UNKNOWN_PROTOCOL/.test(code)) {
        fail(
          "not-tls",
          "plaintext agent",
          `${address} does not speak TLS: the agent there runs in plaintext (--insecure). Start this ` +
            "agent with --insecure as well, or every agent of the cluster with --tls-ca/--tls-cert/--tls-key",
        );
      } else if (code === "ECONNRESET" || code === "EPIPE") {
        fail(
          "client-refused",
          "connection closed in the handshake",
          `${address} closed the connection during the TLS handshake (${code})`,
        );
      } else {
        fail("unreachable", code || "TLS failed", `TLS with ${address} failed: ${error.message}`);
      }
    });
    socket.once("close", () =>
      fail(
        "client-refused",
        "our certificate refused",
        `${address} closed the connection after the TLS handshake: it most likely refused our certificate ` +
          "(not signed by its cluster CA)",
      ),
    );
  });
}

/** How long a probe that has its answer lets the server give its own verdict before closing, in ms. */
const SERVER_VERDICT_MS = 500;

/**
 * Closes a probe's TLS socket once the server has said what it thinks of our certificate (its alert
 * or its first bytes), or after {@link SERVER_VERDICT_MS}: the server then logs why it refused us,
 * not only that we went away.
 */
function closeGently(socket: TLSSocket): void {
  // Not unref'd: a process exiting now would reset the connection before the server read our part.
  const timer = setTimeout(() => socket.destroy(), SERVER_VERDICT_MS);
  socket.on("error", () => {});
  socket.once("data", () => socket.destroy());
  socket.once("close", () => clearTimeout(timer));
}

/** The HTTP/2 connection preface and an empty SETTINGS frame: what a plaintext gRPC client sends first. */
const HTTP2_PREFACE = Buffer.concat([
  Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1"),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);
/** The frame type of SETTINGS, the fourth byte of the first frame a plaintext HTTP/2 server sends. */
const SETTINGS_FRAME = 4;

/**
 * Checks that `address` serves plaintext HTTP/2, as an `--insecure` agent expects: it sends the
 * HTTP/2 preface and expects SETTINGS back. A server that closes instead is asked for a TLS handshake:
 * one that answers uses TLS, which a plaintext agent cannot join. Never throws for network reasons.
 */
export async function diagnosePlaintext(
  address: string,
  timeoutMs = DEFAULT_DIAGNOSE_TIMEOUT_MS,
): Promise<TlsDiagnosis> {
  const { host, port } = target(address);
  const first = await new Promise<"h2" | "closed" | TlsDiagnosis>((resolve) => {
    const socket = connectTcp({ host, port });
    const finish = (result: "h2" | "closed" | TlsDiagnosis) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(timedOut(address, timeoutMs)), timeoutMs);
    socket.once("connect", () => socket.write(HTTP2_PREFACE));
    socket.once("data", (data: Buffer) => finish(data[3] === SETTINGS_FRAME ? "h2" : "closed"));
    socket.once("error", (error: NodeJS.ErrnoException) => {
      finish(unreachable(address, error.code ?? "") ?? "closed");
    });
    socket.once("close", () => finish("closed"));
  });
  if (first === "h2") return { ok: true };
  if (first !== "closed") return first;
  if (!(await speaksTls(host, port, timeoutMs))) return { ok: true };
  return {
    ok: false,
    problem: "tls-only",
    reason: "TLS agent",
    message:
      `the agent at ${address} uses TLS, but this one runs in plaintext (--insecure): start it with ` +
      "--tls-ca, --tls-cert and --tls-key (certificates of the cluster's CA, made by 'ubicrawl certs')",
    retryable: false,
  };
}

/** True when a TLS handshake with `host:port` gets as far as the server's answer (its hello or an alert). */
function speaksTls(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port,
      ALPNProtocols: ["h2"],
      ...(isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: false,
    });
    let settled = false;
    const finish = (tls: boolean, gently = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (gently) closeGently(socket);
      else socket.destroy();
      resolve(tls);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    // Handshake done: TLS it is. The server may still refuse our (absent) certificate: let it say so.
    socket.once("secureConnect", () => finish(true, true));
    socket.on("error", (error: NodeJS.ErrnoException) => finish(/ALERT|CERTIFICATE/.test(error.code ?? "")));
    socket.once("close", () => finish(false));
  });
}

/**
 * Probes `address` the way an agent with `security` talks to it: {@link diagnoseTls} with TLS (the
 * certificate checked against `serverName`, by default the address's host), {@link diagnosePlaintext}
 * in plaintext.
 */
export function diagnoseTransport(
  address: string,
  security: TransportSecurity,
  timeoutMs = DEFAULT_DIAGNOSE_TIMEOUT_MS,
  serverName?: string,
): Promise<TlsDiagnosis> {
  return security.kind === "tls"
    ? diagnoseTls(address, security, timeoutMs, serverName)
    : diagnosePlaintext(address, timeoutMs);
}
