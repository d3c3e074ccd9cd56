/**
 * Files are made in a private scratch folder inside the output folder, then renamed into place:
 * a half-written key or certificate never appears under its final name, and keys are never readable
 * by others (created 0600 in a 0700 folder).
 */

import { generateKeyPair, randomBytes } from "node:crypto";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Permission bits of private key files: owner read/write only. */
export const KEY_FILE_MODE = 0o600;

/** A scratch folder for one batch of openssl work; `commit` moves a file out, `dispose` cleans up. */
export interface WorkDir {
  /** Absolute path of the scratch folder. */
  readonly path: string;
  /** Path of `name` inside the scratch folder. */
  file(name: string): string;
  /** Renames scratch file `name` to `target` (atomic: same file system). */
  commit(name: string, target: string): Promise<void>;
  /** Removes the scratch folder and whatever is left in it. */
  dispose(): Promise<void>;
}

/** Creates a scratch folder (mode 0700) inside `outDir`. */
export async function openWorkDir(outDir: string): Promise<WorkDir> {
  const path = await mkdtemp(join(outDir, ".ubicrawl-certs-"));
  return {
    path,
    file: (name) => join(path, name),
    commit: (name, target) => rename(join(path, name), target),
    dispose: () => rm(path, { recursive: true, force: true }),
  };
}

/** Generates an ECDSA P-256 key (fast, and accepted by every TLS stack gRPC uses) as PKCS#8 PEM. */
export function generatePrivateKeyPem(): Promise<string> {
  return new Promise((resolve, reject) => {
    generateKeyPair(
      "ec",
      {
        namedCurve: "prime256v1",
        publicKeyEncoding: { type: "spki", format: "pem" },
        privateKeyEncoding: { type: "pkcs8", format: "pem" },
      },
      (error, _publicKey, privateKey) => (error ? reject(error) : resolve(privateKey)),
    );
  });
}

/** Writes a private key readable by its owner only. */
export async function writePrivateKey(path: string, pem: string): Promise<void> {
  await writeFile(path, pem, { mode: KEY_FILE_MODE, flag: "wx" });
}

/** A random positive 128-bit serial number in hex, as openssl's `-set_serial` takes it (RFC 5280 §4.1.2.2). */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return `0x${bytes.toString("hex")}`;
}
