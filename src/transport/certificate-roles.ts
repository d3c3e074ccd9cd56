import type { PeerCertificate } from "node:tls";

/** Extended key usage OIDs (RFC 5280). */
const SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

/**
 * The role a cluster certificate was issued for (`ubicrawl certs`): an agent's certificate serves and
 * dials (serverAuth + clientAuth), an operator's only dials (clientAuth). `none` for a certificate that
 * is neither, or no certificate.
 */
export type CertificateRole = "agent" | "operator" | "none";

/** The role of a peer's certificate, from its extended key usage. */
export function certificateRole(
  certificate: Pick<PeerCertificate, "ext_key_usage"> | undefined,
): CertificateRole {
  const usages = certificate?.ext_key_usage ?? [];
  if (!usages.includes(CLIENT_AUTH)) return "none";
  return usages.includes(SERVER_AUTH) ? "agent" : "operator";
}
