/**
 * gRPC reports every failed TLS handshake as "UNAVAILABLE: Failed to connect". This probe redoes the
 * handshake with plain `tls` and says what went wrong in words an operator can act on.
 */

import { isIP } from "node:net";
import { connect, type TLSSocket } from "node:tls";
import { ErrorCode, UbiError } from "../errors.js";
import { type MutualTlsTransport, parseHostPort } from "../transport/index.js";

/** How long the probe waits for the connection and the server's verdict, in ms. */
export const DEFAULT_DIAGNOSE_TIMEOUT_MS = 3000;

/** What the probe found; `ok` means the server accepted our certificate and we accepted its. */
export type TlsDiagnosis =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Which side is at fault, for callers that branch on it. */
      readonly problem:
        | "unreachable"
        | "not-tls"
        | "untrusted-server"
        | "wrong-server-name"
        | "client-refused"
        | "timeout";
      /** One sentence for the operator. */
      readonly message: string;
    };

/**
 * Connects to `address` (`host:port`) with `security`'s CA, certificate and key, as a gRPC client
 * would, and explains a failure. Never throws for network reasons; `InvalidArgument` for a bad address.
 */
export function diagnoseTls(
  address: string,
  security: MutualTlsTransport,
  timeoutMs = DEFAULT_DIAGNOSE_TIMEOUT_MS,
): Promise<TlsDiagnosis> {
  const target = parseHostPort(address);
  if (target === undefined) {
    throw new UbiError(ErrorCode.InvalidArgument, `address must be host:port, got ${address}`);
  }
  const { host, port } = target;
  return new Promise((resolve) => {
    let socket: TLSSocket | undefined;
    const finish = (diagnosis: TlsDiagnosis) => {
      clearTimeout(timer);
      socket?.destroy();
      resolve(diagnosis);
    };
    const fail = (problem: Exclude<TlsDiagnosis, { ok: true }>["problem"], message: string) =>
      finish({ ok: false, problem, message });
    const timer = setTimeout(
      () => fail("timeout", `no TLS answer from ${address} within ${timeoutMs} ms`),
      timeoutMs,
    );
    socket = connect({
      host,
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
          `the certificate of ${address} is not valid for ${host} (${String(reason)}); ` +
            `issue it with 'ubicrawl certs --hosts ${host},...'`,
        );
        return;
      }
      if (!tls.authorized) {
        fail(
          "untrusted-server",
          `${address} shows a certificate not signed by our CA (${String(reasonCode)}): ` +
            "it belongs to another cluster, or --tls-ca is the wrong file",
        );
        return;
      }
      // The server judges our certificate after the handshake: its HTTP/2 SETTINGS mean accepted,
      // an alert means refused.
      tls.once("data", () => finish({ ok: true }));
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code ?? "";
      if (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ETIMEDOUT") {
        fail("unreachable", `cannot connect to ${address} (${code})`);
      } else if (/ALERT/.test(code)) {
        fail(
          "client-refused",
          `${address} refused our certificate (${error.message.trim()}): it is not signed by that agent's CA`,
        );
      } else if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|UNKNOWN_PROTOCOL/.test(code)) {
        fail("not-tls", `${address} does not speak TLS: is it running with --insecure?`);
      } else if (code === "ECONNRESET" || code === "EPIPE") {
        fail("client-refused", `${address} closed the connection during the TLS handshake (${code})`);
      } else {
        fail("unreachable", `TLS with ${address} failed: ${error.message}`);
      }
    });
    socket.once("close", () =>
      fail(
        "client-refused",
        `${address} closed the connection after the TLS handshake: it most likely refused our certificate ` +
          "(not signed by its cluster CA)",
      ),
    );
  });
}
