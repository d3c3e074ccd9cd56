/**
 * Runs the `openssl` binary. Node's crypto makes keys but cannot sign X.509 certificates, so the
 * signing steps go through openssl (present on Debian and most Unix systems as /usr/bin/openssl).
 */

import { spawn } from "node:child_process";
import { ErrorCode, UbiError } from "../errors.js";

/** The openssl command used unless told otherwise (looked up on PATH). */
export const DEFAULT_OPENSSL = "openssl";

/** Longest an openssl invocation may take, in ms; signing one certificate takes a few ms. */
const OPENSSL_TIMEOUT_MS = 30_000;

/**
 * Runs `openssl <args>` in `cwd`, resolving to its stdout. Fails with `CertificateFailed` when
 * openssl is missing or exits non-zero.
 */
export function runOpenssl(opensslPath: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Not spawn's own `timeout`: its timer outlives a spawn that fails (ENOENT) and holds the process.
    const child = spawn(opensslPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), OPENSSL_TIMEOUT_MS);
    timer.unref();
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const message =
        error.code === "ENOENT"
          ? `the openssl command was not found (${opensslPath}); install it (Debian: apt-get install openssl)`
          : `cannot run ${opensslPath}: ${error.message}`;
      reject(new UbiError(ErrorCode.CertificateFailed, message, { cause: error }));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        resolve(out);
        return;
      }
      const why = signal ? `killed by ${signal}` : `exit code ${code}`;
      const detail = err.trim().split("\n").slice(0, 3).join("; ");
      reject(
        new UbiError(ErrorCode.CertificateFailed, `openssl ${args[0] ?? ""} failed (${why}): ${detail}`),
      );
    });
  });
}
