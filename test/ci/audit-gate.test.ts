import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";

/**
 * The CI gate on security advisories (`.ci/audit.mjs`), judged on saved `npm audit --json` reports:
 * it fails on a high or critical advisory, passes a clean or low-only report, and only warns when the
 * registry refused the audit request (the advisories could not be checked).
 */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-audit-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function gate(report: unknown): Promise<{ code: number | null; stdout: string }> {
  const file = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(report));
  const run = spawnSync(process.execPath, [".ci/audit.mjs", "--report", file], { encoding: "utf8" });
  return { code: run.status, stdout: run.stdout };
}

const counts = (high: number, critical: number, low = 0) => ({
  metadata: { vulnerabilities: { info: 0, low, moderate: 0, high, critical, total: high + critical + low } },
});

it("fails on a high advisory and names the package", async () => {
  const result = await gate({
    ...counts(1, 0),
    vulnerabilities: { "some-lib": { severity: "high", range: "<1.2.3" } },
  });
  expect(result.code).toBe(1);
  expect(result.stdout).toContain("high: some-lib <1.2.3");
});

it("fails on a critical advisory", async () => {
  expect((await gate(counts(0, 2))).code).toBe(1);
});

it("passes a clean report and one with low advisories only", async () => {
  expect((await gate(counts(0, 0))).code).toBe(0);
  expect((await gate(counts(0, 0, 3))).code).toBe(0);
});

it("warns, without failing, when the registry refused the audit request", async () => {
  const result = await gate({ statusCode: 405, error: { code: "E405", summary: "Method Not Allowed" } });
  expect(result.code).toBe(0);
  expect(result.stdout).toContain("advisories were NOT checked");
});
