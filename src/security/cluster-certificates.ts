/**
 * Everything a mutual-TLS cluster needs in one folder: the CA (`ca.pem`, `ca.key`), one certificate
 * per agent (`<id>.pem`, `<id>.key`) and an operator's client certificate (`operator.pem/.key`).
 */

import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import type { MutualTlsTransport } from "../transport/index.js";
import { AGENT_ID_PATTERN, MAX_ID_CHARS } from "../transport/index.js";
import {
  CA_CERT_FILE,
  CA_KEY_FILE,
  type CertificateAuthority,
  exists,
  openOrCreateCa,
} from "./certificate-authority.js";
import {
  type CertificateFiles,
  certificateFilesOf,
  type IssueRequest,
  issueCertificate,
} from "./issue-certificate.js";
import { DEFAULT_OPENSSL } from "./openssl.js";
import { DEFAULT_CERT_HOSTS, subjectAltNames } from "./subject-alt-names.js";
import { openWorkDir, type WorkDir } from "./work-dir.js";

/** Name (file stem) of the operator's client certificate. */
export const OPERATOR_NAME = "operator";
/** Longest validity accepted, in days (100 years). */
const MAX_DAYS = 36_500;
/** Shortest lifetime of a new CA, in days: agents added later must not outlive it soon. */
const MIN_CA_DAYS = 3650;

/** Options of {@link createClusterCertificates}. */
export interface ClusterCertificatesOptions {
  /**
   * Folder of the files; created (mode 0700) when missing. An existing CA in it is reused, and the
   * certificates already there (`<id>.pem` with `<id>.key`, `operator.pem` with `operator.key`) are
   * kept as they are: only those missing are issued.
   */
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

/** One agent's or the operator's certificate files, and whether this run issued them. */
export interface ClusterCertificate extends CertificateFiles {
  /** True when this run issued the certificate; false when it was in the folder already and was kept. */
  readonly created: boolean;
  /** When the certificate expires, as its notAfter reads (`Nov 28 18:00:00 2027 GMT`). */
  readonly validTo: string;
}

/** What {@link createClusterCertificates} made or kept. */
export interface ClusterCertificates {
  /** The CA, and whether it is new. */
  readonly ca: Omit<CertificateAuthority, "certPem">;
  /** Certificate files by agent id. */
  readonly agents: ReadonlyMap<string, ClusterCertificate>;
  /** The operator's files, unless `operator: false`. */
  readonly operator: ClusterCertificate | undefined;
}

/**
 * Creates (or reuses) the CA in `outDir` and issues the agents' and operator's certificates, signed
 * by it, keeping those already there: a certificate handed out stays the one its holder has, so
 * running it again to add agents changes no file given out before (remove a pair to issue it anew).
 * A kept certificate is checked to be the CA's and its key's. Keys are written mode 0600. Fails with
 * `InvalidArgument` on bad ids, hosts or days, and `CertificateFailed` when openssl is missing or
 * fails, or a kept pair is incomplete, not signed by the CA, or not its key's. Not safe to run twice
 * at once on a new folder.
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
    const requests: IssueRequest[] = [
      ...ids.map((id) => ({ name: id, role: "agent" as const, hosts, days })),
      ...(withOperator ? [{ name: OPERATOR_NAME, role: "operator" as const, hosts: [], days }] : []),
    ];
    await refuseOrphans(outDir, requests);
    const ca = await openOrCreateCa(outDir, Math.max(days, MIN_CA_DAYS), work, opensslPath);
    // Every kept pair checked before anything is issued: a refusal leaves the folder as it was.
    const kept = new Map<string, ClusterCertificate>();
    for (const request of requests) {
      const existing = await keptCertificate(ca, outDir, request.name);
      if (existing) kept.set(request.name, existing);
    }
    const made = new Map<string, ClusterCertificate>();
    for (const request of requests) {
      made.set(
        request.name,
        kept.get(request.name) ?? (await issued(ca, outDir, request, work, opensslPath)),
      );
    }
    const agents = new Map(ids.map((id) => [id, made.get(id) as ClusterCertificate]));
    const operator = withOperator ? made.get(OPERATOR_NAME) : undefined;
    return { ca: { certPath: ca.certPath, keyPath: ca.keyPath, created: ca.created }, agents, operator };
  } finally {
    await work.dispose();
  }
}

/** Issues `request`'s certificate with {@link issueCertificate}, and reads when it expires. */
async function issued(
  ca: CertificateAuthority,
  outDir: string,
  request: IssueRequest,
  work: WorkDir,
  opensslPath: string,
): Promise<ClusterCertificate> {
  const files = await issueCertificate(ca, outDir, request, work, opensslPath);
  const { validTo } = new X509Certificate(await readFile(files.certPath));
  return { ...files, created: true, validTo };
}

/**
 * Refuses, before a new CA is made, a folder with no CA but with files of the certificates asked
 * for: a new CA could not have signed them, and they would otherwise be refused after it was made.
 */
async function refuseOrphans(outDir: string, requests: readonly IssueRequest[]): Promise<void> {
  const caFiles = await Promise.all([CA_CERT_FILE, CA_KEY_FILE].map((file) => exists(join(outDir, file))));
  if (caFiles.some(Boolean)) return;
  const names = requests.flatMap((request) => [`${request.name}.pem`, `${request.name}.key`]);
  const found = (
    await Promise.all(names.map(async (name) => ((await exists(join(outDir, name))) ? name : undefined)))
  ).filter((name): name is string => name !== undefined);
  if (found.length > 0) {
    throw new UbiError(
      ErrorCode.CertificateFailed,
      `${outDir} has ${found.join(", ")} but no ${CA_CERT_FILE} and ${CA_KEY_FILE}, which signed them; ` +
        "restore the CA's files, or remove those files to start a new CA",
    );
  }
}

/**
 * The certificate `<name>.pem` with its key `<name>.key` in `outDir`, checked to be signed by `ca`
 * and to match, or undefined when neither file is there. A lone file, or a pair that fails a check,
 * is a `CertificateFailed` error naming the file and how to issue it again: no certificate a holder
 * may have been given is replaced silently.
 */
async function keptCertificate(
  ca: CertificateAuthority,
  outDir: string,
  name: string,
): Promise<ClusterCertificate | undefined> {
  const files = certificateFilesOf(outDir, name);
  const [hasCert, hasKey] = await Promise.all([exists(files.certPath), exists(files.keyPath)]);
  if (!hasCert && !hasKey) return undefined;
  const again = `remove ${name}.pem and ${name}.key to issue ${name}'s certificate again`;
  if (!hasCert || !hasKey) {
    throw new UbiError(
      ErrorCode.CertificateFailed,
      `${outDir} has ${hasCert ? `${name}.pem` : `${name}.key`} but not ${hasCert ? `${name}.key` : `${name}.pem`}; ` +
        `restore the missing file, or ${again}`,
    );
  }
  const [certPem, keyPem] = await Promise.all([
    readFile(files.certPath, "utf8"),
    readFile(files.keyPath, "utf8"),
  ]);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch (error) {
    throw new UbiError(ErrorCode.CertificateFailed, `${files.certPath} is not a PEM certificate; ${again}`, {
      cause: error,
    });
  }
  const authority = new X509Certificate(ca.certPem);
  if (!certificate.checkIssued(authority) || !certificate.verify(authority.publicKey)) {
    throw new UbiError(
      ErrorCode.CertificateFailed,
      `${files.certPath} was not signed by the CA ${ca.certPath}; ${again}`,
    );
  }
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(keyPem));
  } catch (error) {
    throw new UbiError(ErrorCode.CertificateFailed, `${files.keyPath} is not a PEM private key; ${again}`, {
      cause: error,
    });
  }
  if (!matches) {
    throw new UbiError(
      ErrorCode.CertificateFailed,
      `${files.keyPath} is not the key of ${files.certPath}; ${again}`,
    );
  }
  return { ...files, created: false, validTo: certificate.validTo };
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
