/**
 * Issues one certificate signed by the cluster CA: an agent's (server and client: it both listens
 * and dials its peers) or an operator's (client only, for `ubicrawl stats`).
 */

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CertificateAuthority } from "./certificate-authority.js";
import { runOpenssl } from "./openssl.js";
import { subjectAltNames } from "./subject-alt-names.js";
import { generatePrivateKeyPem, randomSerial, type WorkDir, writePrivateKey } from "./work-dir.js";

/** Where one issued certificate and its key are. */
export interface CertificateFiles {
  /** Path of `<name>.pem`. */
  readonly certPath: string;
  /** Path of `<name>.key` (mode 0600). */
  readonly keyPath: string;
}

/** What to issue. */
export interface IssueRequest {
  /** File stem (`<name>.pem`, `<name>.key`) and common name; already checked to be a safe file name. */
  readonly name: string;
  /** `agent`: serverAuth + clientAuth with SANs; `operator`: clientAuth only. */
  readonly role: "agent" | "operator";
  /** Host names and IPs the certificate is valid for (agents only). */
  readonly hosts: readonly string[];
  /** Validity, in days. */
  readonly days: number;
}

/** The paths `<outDir>/<name>.pem` and `<outDir>/<name>.key`. */
export function certificateFilesOf(outDir: string, name: string): CertificateFiles {
  return { certPath: join(outDir, `${name}.pem`), keyPath: join(outDir, `${name}.key`) };
}

/**
 * Generates a key, has the CA sign a certificate for it, and moves both into `outDir`, replacing
 * earlier ones of the same name (still valid: they were signed by the same CA). `ubicrawl certs`
 * keeps those instead, and calls this only for the missing ones.
 */
export async function issueCertificate(
  ca: CertificateAuthority,
  outDir: string,
  request: IssueRequest,
  work: WorkDir,
  opensslPath: string,
): Promise<CertificateFiles> {
  const san = request.role === "agent" ? subjectAltNames(request.hosts) : undefined;
  const stem = request.name;
  const key = work.file(`${stem}.key`);
  const config = work.file(`${stem}.cnf`);
  const csr = work.file(`${stem}.csr`);
  await writePrivateKey(key, await generatePrivateKeyPem());
  await writeFile(config, leafConfig(request, san));
  await runOpenssl(opensslPath, ["req", "-new", "-config", config, "-key", key, "-out", csr], work.path);
  await runOpenssl(
    opensslPath,
    [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      ca.certPath,
      "-CAkey",
      ca.keyPath,
      "-set_serial",
      randomSerial(),
      "-sha256",
      "-days",
      String(request.days),
      "-extfile",
      config,
      "-extensions",
      "leaf_ext",
      "-out",
      work.file(`${stem}.pem`),
    ],
    work.path,
  );
  const files = certificateFilesOf(outDir, request.name);
  await work.commit(`${stem}.key`, files.keyPath);
  await work.commit(`${stem}.pem`, files.certPath);
  return files;
}

function leafConfig(request: IssueRequest, san: string | undefined): string {
  return [
    "[req]",
    "distinguished_name = dn",
    "prompt = no",
    "[dn]",
    `CN = ${request.role === "agent" ? request.name : `ubicrawl ${request.name}`}`,
    "[leaf_ext]",
    "basicConstraints = critical,CA:FALSE",
    "keyUsage = critical,digitalSignature",
    `extendedKeyUsage = ${request.role === "agent" ? "serverAuth,clientAuth" : "clientAuth"}`,
    ...(san === undefined ? [] : [`subjectAltName = ${san}`]),
    "subjectKeyIdentifier = hash",
    "authorityKeyIdentifier = keyid,issuer",
    "",
  ].join("\n");
}
