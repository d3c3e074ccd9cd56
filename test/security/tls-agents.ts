import { join } from "node:path";
import { CA_CERT_FILE, type CertificateFiles, certificateFilesOf } from "../../src/security/index.js";
import { runUbicrawl, type UbicrawlProcess } from "../agent/harness.js";

/** Where an agent's TLS files come from: the CA it trusts and the certificate it shows. */
export interface TlsIdentity {
  /** `ca.pem` the agent checks its peers against. */
  readonly caPath: string;
  /** The agent's own certificate and key. */
  readonly files: CertificateFiles;
}

/** The identity of `name` in a certificates folder made by `ubicrawl certs` (its own CA). */
export function identityIn(certsDir: string, name: string): TlsIdentity {
  return { caPath: join(certsDir, CA_CERT_FILE), files: certificateFilesOf(certsDir, name) };
}

/** The `--tls-*` flags of `identity`. */
export function tlsFlags(identity: TlsIdentity): string[] {
  return [
    "--tls-ca",
    identity.caPath,
    "--tls-cert",
    identity.files.certPath,
    "--tls-key",
    identity.files.keyPath,
  ];
}

/** A cluster agent process and the address it listens on. */
export interface TlsAgent {
  readonly id: string;
  readonly process: UbicrawlProcess;
  readonly address: string;
}

/** Spawns `ubicrawl agent --id ID --listen 127.0.0.1:0 <args>` and waits until it listens. */
export async function startTlsAgent(id: string, args: readonly string[], cwd: string): Promise<TlsAgent> {
  const process = runUbicrawl(
    ["agent", "--id", id, "--listen", "127.0.0.1:0", "--progress", "off", ...args],
    { cwd },
  );
  return { id, process, address: await process.listening(20_000) };
}
