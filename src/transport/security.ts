/**
 * Pluggable transport credentials. Agents talk in plaintext on trusted networks (`insecure`), or
 * with mutual TLS (`tls`): both sides present a certificate signed by the cluster's CA.
 */

import { ChannelCredentials, ServerCredentials } from "@grpc/grpc-js";
import { ErrorCode, UbiError } from "../errors.js";

/** Plaintext HTTP/2: for loopback laboratories and trusted networks. */
export interface InsecureTransport {
  /** Discriminant. */
  kind: "insecure";
}

/** Mutual TLS: each side proves itself with a certificate signed by `caPem`. */
export interface MutualTlsTransport {
  /** Discriminant. */
  kind: "tls";
  /** PEM of the CA that signs every agent's certificate; peers are checked against it. */
  caPem: string;
  /** PEM certificate (chain) of this agent; its SAN must match the address peers dial. */
  certPem: string;
  /** PEM private key of `certPem`. */
  keyPem: string;
}

/** How agents authenticate and protect their gRPC connections. */
export type TransportSecurity = InsecureTransport | MutualTlsTransport;

/** The default: plaintext. */
export const INSECURE: TransportSecurity = Object.freeze({ kind: "insecure" });

function pem(value: unknown, field: string): Buffer {
  if (typeof value !== "string" || !value.includes("-----BEGIN ")) {
    throw new UbiError(ErrorCode.InvalidArgument, `security.${field} must be a PEM string`);
  }
  return Buffer.from(value);
}

/** Throws `UbiError(InvalidArgument)` unless `security` is a well-formed {@link TransportSecurity}. */
export function checkTransportSecurity(security: TransportSecurity): void {
  if (security?.kind === "insecure") return;
  if (security?.kind === "tls") {
    pem(security.caPem, "caPem");
    pem(security.certPem, "certPem");
    pem(security.keyPem, "keyPem");
    return;
  }
  throw new UbiError(ErrorCode.InvalidArgument, "security.kind must be 'insecure' or 'tls'");
}

/** Server credentials for `security`; with TLS, clients must present a certificate. */
export function serverCredentialsFor(security: TransportSecurity): ServerCredentials {
  checkTransportSecurity(security);
  if (security.kind === "insecure") return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(
    pem(security.caPem, "caPem"),
    [{ cert_chain: pem(security.certPem, "certPem"), private_key: pem(security.keyPem, "keyPem") }],
    true,
  );
}

/** Channel (client) credentials for `security`; with TLS, the client presents its certificate. */
export function channelCredentialsFor(security: TransportSecurity): ChannelCredentials {
  checkTransportSecurity(security);
  if (security.kind === "insecure") return ChannelCredentials.createInsecure();
  return ChannelCredentials.createSsl(
    pem(security.caPem, "caPem"),
    pem(security.keyPem, "keyPem"),
    pem(security.certPem, "certPem"),
  );
}
