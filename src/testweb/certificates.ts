import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClusterCertificates } from "../security/index.js";
import type { WebModel } from "./model.js";
import type { TestWebTls } from "./server.js";

/** File name of the test web's CA certificate, written next to its hosts file. */
export const TEST_WEB_CA_FILE = "testweb-ca.pem";
/** Days the throwaway certificates are valid. */
const DAYS = 30;
/** The name the server certificate and its key are issued under. */
const SERVER_NAME = "testweb";

/**
 * Makes a throwaway CA and a server certificate naming every host of `model`, for an `https` test web.
 * Only the CA certificate is kept, at `caPath` (give it to agents as `--ca-file`); the CA's key is
 * deleted, so nothing else can ever be signed by it. Needs openssl, as `ubicrawl certs` does.
 */
export async function createTestWebCertificates(model: WebModel, caPath: string): Promise<TestWebTls> {
  const work = await mkdtemp(join(tmpdir(), "ubicrawl-testweb-tls-"));
  try {
    const certificates = await createClusterCertificates({
      outDir: work,
      agents: [SERVER_NAME],
      hosts: model.hosts.map((host) => host.name),
      operator: false,
      days: DAYS,
    });
    const files = certificates.agents.get(SERVER_NAME);
    if (files === undefined) throw new Error("no server certificate was issued");
    const [certPem, keyPem] = await Promise.all([
      readFile(files.certPath, "utf8"),
      readFile(files.keyPath, "utf8"),
    ]);
    await copyFile(certificates.ca.certPath, caPath);
    return { certPem, keyPem };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
