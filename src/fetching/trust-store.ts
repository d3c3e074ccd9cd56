import { readFile } from "node:fs/promises";
import * as tls from "node:tls";
import { ErrorCode, UbiError } from "../errors.js";

/** A PEM certificate block. */
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** tls.getCACertificates (Node 22.15 and later; absent from Node 20 and its types). */
type ListCertificates = (type: "default" | "system" | "extra") => string[];
const listCertificates = (tls as { getCACertificates?: ListCertificates }).getCACertificates;

/**
 * The CA certificates `https:` targets are verified against when extra ones are given: Node's own
 * trust (its bundled roots, or whatever --use-system-ca or --use-openssl-ca chose), the system's store
 * where this Node line can list it (22.15 and later), NODE_EXTRA_CA_CERTS, plus `extraPems`.
 * Undefined without extra certificates: Node's default trust then applies unchanged.
 */
export async function trustedCertificates(
  extraPems: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<string[] | undefined> {
  if (extraPems.length === 0) return undefined;
  if (listCertificates !== undefined) {
    return [...new Set([...listCertificates("default"), ...listCertificates("system"), ...extraPems])];
  }
  // Node 20: its bundled roots, and the NODE_EXTRA_CA_CERTS it would have added itself.
  const fromEnv = env.NODE_EXTRA_CA_CERTS;
  const extraFromEnv =
    fromEnv === undefined || fromEnv === "" ? [] : await readCaFiles([fromEnv]).catch(() => []);
  return [...new Set([...tls.rootCertificates, ...extraFromEnv, ...extraPems])];
}

/**
 * Reads the certificates of `--ca-file` files, each one or more PEM blocks.
 * @throws UbiError CertificateFailed naming a file that cannot be read or holds no certificate.
 */
export async function readCaFiles(paths: readonly string[]): Promise<string[]> {
  const pems: string[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      throw new UbiError(ErrorCode.CertificateFailed, `--ca-file ${path}: cannot read it`, { cause: error });
    }
    const blocks = text.match(PEM_CERTIFICATE) ?? [];
    if (blocks.length === 0) {
      throw new UbiError(ErrorCode.CertificateFailed, `--ca-file ${path}: no PEM certificate in it`);
    }
    pems.push(...blocks);
  }
  return pems;
}
