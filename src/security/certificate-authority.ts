/**
 * The cluster's certificate authority: one self-signed CA per cluster, whose key signs every
 * agent's and operator's certificate. Agents trust exactly this CA, so only holders of a certificate
 * it signed can talk to them.
 */

import { createPrivateKey, X509Certificate } from "node:crypto";
import { access, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import { runOpenssl } from "./openssl.js";
import { generatePrivateKeyPem, randomSerial, type WorkDir, writePrivateKey } from "./work-dir.js";

/** File name of the CA certificate in a certificates folder. */
export const CA_CERT_FILE = "ca.pem";
/** File name of the CA private key in a certificates folder. */
export const CA_KEY_FILE = "ca.key";
/** Common name of the CA certificates ubicrawl makes. */
const CA_COMMON_NAME = "ubicrawl cluster CA";

/** A usable CA: its files and PEM texts. */
export interface CertificateAuthority {
  /** Absolute or given path of `ca.pem`. */
  readonly certPath: string;
  /** Path of `ca.key`. */
  readonly keyPath: string;
  /** PEM of the CA certificate. */
  readonly certPem: string;
  /** True when this call created the CA; false when an existing one was reused. */
  readonly created: boolean;
}

/**
 * Reuses the CA in `outDir` (`ca.pem` + `ca.key`, checked to match, be a CA and be unexpired), or
 * creates one valid for `days` days when neither file exists. A lone `ca.pem` or `ca.key` is an error:
 * a new CA would silently lock out every agent the old one certified.
 */
export async function openOrCreateCa(
  outDir: string,
  days: number,
  work: WorkDir,
  opensslPath: string,
): Promise<CertificateAuthority> {
  const certPath = join(outDir, CA_CERT_FILE);
  const keyPath = join(outDir, CA_KEY_FILE);
  const [hasCert, hasKey] = await Promise.all([exists(certPath), exists(keyPath)]);
  if (hasCert && hasKey) return { ...(await checkCa(certPath, keyPath)), created: false };
  if (hasCert || hasKey) {
    throw new UbiError(
      ErrorCode.CertificateFailed,
      `${outDir} has ${hasCert ? CA_CERT_FILE : CA_KEY_FILE} but not ${hasCert ? CA_KEY_FILE : CA_CERT_FILE}; ` +
        "restore the missing file, or remove both to start a new CA",
    );
  }
  await writePrivateKey(work.file(CA_KEY_FILE), await generatePrivateKeyPem());
  await writeFile(work.file("ca.cnf"), caConfig());
  await runOpenssl(
    opensslPath,
    [
      "req",
      "-x509",
      "-new",
      "-config",
      work.file("ca.cnf"),
      "-extensions",
      "ca_ext",
      "-key",
      work.file(CA_KEY_FILE),
      "-sha256",
      "-days",
      String(days),
      "-set_serial",
      randomSerial(),
      "-out",
      work.file(CA_CERT_FILE),
    ],
    work.path,
  );
  // Key first: a crash in between leaves a lone ca.key, which the next run reports instead of replacing.
  await work.commit(CA_KEY_FILE, keyPath);
  await work.commit(CA_CERT_FILE, certPath);
  return { certPath, keyPath, certPem: await readFile(certPath, "utf8"), created: true };
}

/** Loads an existing CA and refuses one that cannot sign: not a CA, expired, or not its key. */
async function checkCa(certPath: string, keyPath: string): Promise<Omit<CertificateAuthority, "created">> {
  const [certPem, keyPem] = await Promise.all([readFile(certPath, "utf8"), readFile(keyPath, "utf8")]);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch (error) {
    throw new UbiError(ErrorCode.CertificateFailed, `${certPath} is not a PEM certificate`, { cause: error });
  }
  if (!certificate.ca) throw new UbiError(ErrorCode.CertificateFailed, `${certPath} is not a CA certificate`);
  if (Date.parse(certificate.validTo) <= Date.now()) {
    throw new UbiError(ErrorCode.CertificateFailed, `the CA ${certPath} expired on ${certificate.validTo}`);
  }
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(keyPem));
  } catch (error) {
    throw new UbiError(ErrorCode.CertificateFailed, `${keyPath} is not a PEM private key`, { cause: error });
  }
  if (!matches) throw new UbiError(ErrorCode.CertificateFailed, `${keyPath} is not the key of ${certPath}`);
  return { certPath, keyPath, certPem };
}

function caConfig(): string {
  return [
    "[req]",
    "distinguished_name = dn",
    "prompt = no",
    "[dn]",
    `CN = ${CA_COMMON_NAME}`,
    "[ca_ext]",
    "basicConstraints = critical,CA:TRUE,pathlen:0",
    "keyUsage = critical,keyCertSign,cRLSign",
    "subjectKeyIdentifier = hash",
    "authorityKeyIdentifier = keyid:always",
    "",
  ].join("\n");
}

/** True when `path` exists (any kind of file). */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
