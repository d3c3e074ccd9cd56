/**
 * Pluggable transport credentials. Agents talk in plaintext on trusted networks (`insecure`), or
 * with mutual TLS (`tls`): both sides present a certificate signed by the cluster's CA.
 */

import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { checkServerIdentity } from "node:tls";
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

/**
 * TLS server name (SNI) sent when dialing an IP literal. SNI may carry only DNS names (RFC 6066), and
 * Node 26 refuses an IP there, but grpc-js sets it to the dialed host: for an IP it is given this
 * reserved name instead (agents serve one certificate whatever the SNI), and the certificate is still
 * checked against the IP dialed.
 */
export const IP_TARGET_SERVER_NAME = "ubicrawl-agent.invalid";

/** Client credentials and channel options for dialing `host` (a DNS name or an IP literal). */
export interface ChannelSecurity {
  readonly credentials: ChannelCredentials;
  readonly options: Readonly<Record<string, string>>;
}

/**
 * Channel (client) credentials for `security` to dial `host`; with TLS, the client presents its
 * certificate and checks the server's against `serverName` (`host` itself unless an address was
 * resolved from a name, such as a `--join` name: then that name; see {@link IP_TARGET_SERVER_NAME}).
 */
export function channelSecurityFor(
  security: TransportSecurity,
  host: string,
  serverName: string = host,
): ChannelSecurity {
  checkTransportSecurity(security);
  if (security.kind === "insecure") return { credentials: ChannelCredentials.createInsecure(), options: {} };
  const credentials = ChannelCredentials.createSsl(
    pem(security.caPem, "caPem"),
    pem(security.keyPem, "keyPem"),
    pem(security.certPem, "certPem"),
    { checkServerIdentity: (_name, certificate) => checkServerIdentity(serverName, certificate) },
  );
  const sni = isIP(serverName) === 0 ? serverName : IP_TARGET_SERVER_NAME;
  return {
    credentials,
    options: sni === host ? {} : { "grpc.ssl_target_name_override": sni },
  };
}

/** How {@link checkTlsMaterial} names the CA, certificate and key in its messages (e.g. their files). */
export interface TlsMaterialNames {
  /** @default "the CA certificate" */
  readonly ca?: string;
  /** @default "the certificate" */
  readonly cert?: string;
  /** @default "the private key" */
  readonly key?: string;
}

/**
 * Checks that `security`'s files make a working identity: each parses, the key is the certificate's,
 * and the certificate has not expired. Throws `UbiError(CertificateFailed)` naming the file at fault
 * (by `names`) and what to do; TLS would otherwise fail later with an OpenSSL code. Whether the CA
 * signed the certificate is the peers' to judge (a chain may hold intermediates): `diagnoseTls`
 * explains their refusal.
 */
export function checkTlsMaterial(
  security: MutualTlsTransport,
  names: TlsMaterialNames = {},
  nowMs = Date.now(),
): void {
  const caName = names.ca ?? "the CA certificate";
  const certName = names.cert ?? "the certificate";
  const keyName = names.key ?? "the private key";
  const fail = (message: string, cause?: unknown): never => {
    throw new UbiError(ErrorCode.CertificateFailed, message, cause === undefined ? undefined : { cause });
  };
  const parse = <T>(make: () => T, what: string): T => {
    try {
      return make();
    } catch (error) {
      return fail(`${what}: ${(error as Error).message}`, error);
    }
  };
  const cas = pemBlocks(security.caPem, "CERTIFICATE");
  if (cas.length === 0) fail(`${caName} holds no PEM certificate`);
  for (const block of cas) {
    parse(() => new X509Certificate(block), `${caName} is not a readable PEM certificate`);
  }
  const cert = parse(
    () => new X509Certificate(security.certPem),
    `${certName} is not a readable PEM certificate`,
  );
  const key: KeyObject = parse(
    () => createPrivateKey(security.keyPem),
    `${keyName} is not a readable PEM private key (an encrypted key is not supported)`,
  );
  if (!cert.checkPrivateKey(key)) {
    fail(
      `${certName} and ${keyName} do not match: the key is not the one the certificate was made for. ` +
        "Give the key issued with that certificate ('ubicrawl certs' writes NAME.pem with NAME.key)",
    );
  }
  if (Date.parse(cert.validTo) < nowMs) {
    fail(`${certName} expired on ${cert.validTo}: issue a new one with 'ubicrawl certs'`);
  }
}

/** The PEM blocks of `label` in `text`, each with its BEGIN and END lines. */
function pemBlocks(text: string, label: string): string[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----[\\s\\S]*?-----END ${label}-----`, "g");
  return text.match(pattern) ?? [];
}
