import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/**
 * The programs some tests need besides Node.js (`.ci/run` installs each with apt-get), why each is
 * missing on this machine, and the one rule for skipping: a developer without one sees the skip said
 * aloud, CI (`CI=true`) fails instead, so no test silently stops guarding what it guards.
 */

/** Debian's Chromium, driven by playwright-core (`UBICRAWL_CHROMIUM` to use another binary). */
export const CHROMIUM = process.env.UBICRAWL_CHROMIUM ?? "/usr/bin/chromium";

/** GNU time, whose `-f %M` gives a child's peak RSS. */
export const GNU_TIME = "/usr/bin/time";

/** Why Chromium cannot run here, or undefined when it can. */
export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `no browser at ${CHROMIUM} (apt-get install chromium)`;

/** Why GNU time cannot run here, or undefined when it can. */
export const gnuTimeMissing = existsSync(GNU_TIME) ? undefined : `no ${GNU_TIME} (apt-get install time)`;

/** Why the openssl command (certificates for the TLS tests) cannot run here, or undefined when it can. */
export const opensslMissing = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "no openssl command (apt-get install openssl)";
  }
})();

/**
 * True when the tests needing a tool must be skipped because `missing` says it is absent (and why);
 * false when it is present. Under `CI=true` an absent tool throws instead, failing the test file.
 */
export function skipWithout(missing: string | undefined): boolean {
  if (missing === undefined) return false;
  if (process.env.CI === "true") {
    throw new Error(`${missing}: under CI=true the tests that need it fail instead of skipping`);
  }
  console.warn(`tests skipped: ${missing}`);
  return true;
}
