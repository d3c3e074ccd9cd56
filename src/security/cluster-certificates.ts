/**
 * Everything a mutual-TLS cluster needs in one folder: the CA (`ca.pem`, `ca.key`), one certificate
 * per agent (`<id>.pem`, `<id>.key`) and an operator's client certificate (`operator.pem/.key`).
 */

import { mkdir, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import type { MutualTlsTransport } from "../transport/index.js";
import { AGENT_ID_PATTERN, MAX_ID_CHARS } from "../transport/index.js";
import { type CertificateAuthority, openOrCreateCa } from "./certificate-authority.js";
import { type CertificateFiles, issueCertificate } from "./issue-certificate.js";
import { DEFAULT_OPENSSL } from "./openssl.js";
import { DEFAULT_CERT_HOSTS, subjectAltNames } from "./subject-alt-names.js";
import { openWorkDir } from "./work-dir.js";

/** Name (file stem) of the operator's client certificate. */
export const OPERATOR_NAME = "operator";
/** Longest validity accepted, in days (100 years). */
const MAX_DAYS = 36_500;
/** Shortest lifetime of a new CA, in days: agents added later must not outlive it soon. */
const MIN_CA_DAYS = 3650;

/** Options of {@link createClusterCertificates}. */
export interface ClusterCertificatesOptions {
  /** Folder of the files; created (mode 0700) when missing; an existing CA in it is reused. */
  outDir: string;
  /** Agent ids to issue certificates for (may be empty, e.g. to make only the CA and operator). */
  agents: readonly string[];
  /**
   * Host names and IPs every agent certificate is valid for: each address agents are dialed at.
   * @default ["127.0.0.1", "::1", "localhost"]
   */
  hosts?: readonly string[];
  /**
   * Validity of the agent and operator certificates, in days (a new CA gets at least 3650).
   * @default 365
   */
  days?: number;
  /**
   * Also issue the operator's client certificate.
   * @default true
   */
  operator?: boolean;
  /**
   * The openssl command.
   * @default "openssl"
   */
  opensslPath?: string;
}

/** What {@link createClusterCertificates} made. */
export interface ClusterCertificates {
  /** The CA, and whether it is new. */
  readonly ca: Omit<CertificateAuthority, "certPem">;
  /** Certificate files by agent id. */
  readonly agents: ReadonlyMap<string, CertificateFiles>;
  /** The operator's files, unless `operator: false`. */
  readonly operator: CertificateFiles | undefined;
}

/**
 * Creates (or reuses) the CA in `outDir` and issues the agents' and operator's certificates, signed
 * by it. Keys are written mode 0600. Fails with `InvalidArgument` on bad ids, hosts or days, and
 * `CertificateFailed` when openssl is missing or fails. Not safe to run twice at once on a new folder.
 */
export async function createClusterCertificates(
  options: ClusterCertificatesOptions,
): Promise<ClusterCertificates> {
  const hosts = options.hosts ?? DEFAULT_CERT_HOSTS;
  subjectAltNames(hosts);
  const days = options.days ?? 365;
  if (!Number.isSafeInteger(days) || days < 1 || days > MAX_DAYS) {
    throw bad(`days must be an integer from 1 to ${MAX_DAYS}, got ${days}`);
  }
  const withOperator = options.operator ?? true;
  const ids = [...new Set(options.agents)];
  for (const id of ids) checkAgentId(id);
  if (typeof options.outDir !== "string" || options.outDir === "") throw bad("outDir must be a folder path");
  const opensslPath = options.opensslPath ?? DEFAULT_OPENSSL;
  const outDir = resolve(options.outDir);
  await mkdir(outDir, { recursive: true, mode: 0o700 });
  const work = await openWorkDir(outDir);
  try {
    const ca = await openOrCreateCa(outDir, Math.max(days, MIN_CA_DAYS), work, opensslPath);
    const agents = new Map<string, CertificateFiles>();
    for (const id of ids) {
      agents.set(
        id,
        await issueCertificate(ca, outDir, { name: id, role: "agent", hosts, days }, work, opensslPath),
      );
    }
    const operator = withOperator
      ? await issueCertificate(
          ca,
          outDir,
          { name: OPERATOR_NAME, role: "operator", hosts: [], days },
          work,
          opensslPath,
        )
      : undefined;
    return { ca: { certPath: ca.certPath, keyPath: ca.keyPath, created: ca.created }, agents, operator };
  } finally {
    await work.dispose();
  }
}

/** Reads `caPath`, `certPath` and `keyPath` into the transport's mutual-TLS credentials. */
export async function loadMutualTls(caPath: string, files: CertificateFiles): Promise<MutualTlsTransport> {
  const [caPem, certPem, keyPem] = await Promise.all(
    [caPath, files.certPath, files.keyPath].map(async (path) => {
      try {
        return await readFile(path, "utf8");
      } catch (error) {
        throw new UbiError(ErrorCode.CertificateFailed, `cannot read ${path}`, { cause: error });
      }
    }),
  );
  return { kind: "tls", caPem: caPem as string, certPem: certPem as string, keyPem: keyPem as string };
}

/** Ids become file names: the agent id syntax (no `/`, no `..` alone) keeps them inside `outDir`. */
function checkAgentId(id: string): void {
  if (typeof id !== "string" || !AGENT_ID_PATTERN.test(id) || id.length > MAX_ID_CHARS || /^\.+$/.test(id)) {
    throw bad(`agent id "${id}" must be 1–${MAX_ID_CHARS} letters, digits, '.', '_' or '-'`);
  }
  if (id === "ca" || id === OPERATOR_NAME) {
    throw bad(`agent id "${id}" is reserved for the ${id === "ca" ? "CA" : "operator"} files`);
  }
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}
