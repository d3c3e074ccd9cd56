#!/usr/bin/env node
// Runs the tests on the Node.js lines ubicrawl supports besides the machine's own, each taken from the
// npm registry's `node` package (`npx -y node@N`, no other download): a fast subset on each — the unit
// tests, one real crawl (and one into .warc.zst: zstd with dictionaries needs 22.19+), one real cluster
// over mutual TLS and the storage's power-cut checks (what differs between lines: V8, undici, OpenSSL
// defaults, classic-level's prebuilt binary, timers) —, wider on the newest line (the export, metrics,
// cluster dedup, damaged storage). Prints a table and exits 1 if any line failed. CI (.ci/run) runs it
// after `npm test`. (The whole suite on a second line beside the first doubled CI's time, to 36 min:
// the process tests crawl at full speed, and two CPUs are shared by both runs.)
//
//   node scripts/test-node-lines.mjs [--line N]...     (npm run test:node-lines)

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

/** Each line and what runs on it. */
const LINES = [
  { line: 26, tests: "wider" },
  { line: 24, tests: "subset" },
  { line: 22, tests: "subset" },
];
/** Longest a line's run may take before it counts as failed (a hung test must not hang CI). */
const TIMEOUT_MS = { wider: 12 * 60_000, subset: 8 * 60_000 };

/** The fast subset: the unit tier (vitest.config.ts) and a few process tests. */
const SUBSET = [
  "test/core",
  "test/hashing",
  "test/url",
  "test/frontier",
  "test/robots",
  "test/parsing",
  "test/storage",
  "test/transport",
  "test/failure-detector",
  "test/fetching",
  "test/flags",
  "test/testweb",
  "test/ci/node-lines.test.ts",
  "test/agent/single-agent.test.ts",
  "test/agent/warc-zstd-crawl.test.ts",
  "test/security/mutual-tls-cluster.test.ts",
  "test/faults/power-cut-storage.test.ts",
];

/**
 * The newest line's: the subset, and the process tests whose figures depend most on the line (memory
 * of the export, the metrics a scrape reads, a cluster's dedup, damaged storage).
 */
const WIDER = [
  ...SUBSET,
  "test/export",
  "test/console/metrics.test.ts",
  "test/dedup/duplicates-cluster.test.ts",
  "test/faults/warc-damage.test.ts",
  "test/faults/state-damage.test.ts",
];
/** The test paths each kind of run passes to vitest. */
const PATHS = { wider: WIDER, subset: SUBSET };

// vitest would skip a path that no longer exists without a word.
const missing = WIDER.filter((path) => !existsSync(path));
if (missing.length > 0) {
  console.error(`test-node-lines: the subset names paths that do not exist: ${missing.join(", ")}`);
  process.exit(2);
}

const { values } = parseArgs({ options: { line: { type: "string", multiple: true } } });
const chosen = values.line ? LINES.filter(({ line }) => values.line.includes(String(line))) : LINES;
if (chosen.length === 0) {
  console.error(`test-node-lines: --line must be one of ${LINES.map(({ line }) => line).join(", ")}`);
  process.exit(2);
}

/**
 * The failed tests of a vitest JSON report, each as "file > test: first line of its error" (CI shows
 * only the end of its log, so the table repeats what failed).
 */
function failuresIn(reportPath) {
  let report;
  try {
    report = JSON.parse(readFileSync(reportPath, "utf8"));
  } catch {
    return [];
  }
  const failures = [];
  for (const file of report.testResults ?? []) {
    const name = file.name.startsWith(process.cwd()) ? file.name.slice(process.cwd().length + 1) : file.name;
    const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    for (const test of failed) {
      const why = (test.failureMessages?.[0] ?? "").split("\n")[0].slice(0, 300);
      failures.push(`${name} > ${test.fullName}: ${why}`);
    }
    if (failed.length === 0 && file.status === "failed")
      failures.push(`${name}: ${file.message ?? "failed"}`);
  }
  return failures;
}

const reports = mkdtempSync(join(tmpdir(), "ubicrawl-node-lines-"));
const results = [];
for (const { line, tests } of chosen) {
  const probe = spawnSync("npx", ["-y", `node@${line}`, "--version"], {
    encoding: "utf8",
    timeout: 5 * 60_000,
  });
  const version = probe.status === 0 ? probe.stdout.trim() : "";
  if (!version.startsWith(`v${line}.`)) {
    const why = probe.error?.message ?? (probe.stderr?.trim() || `npx gave "${version}"`);
    results.push({ line, version: "-", what: tests, ok: false, seconds: 0, note: `no Node ${line}: ${why}` });
    continue;
  }
  console.log(`\n== Node ${version}: the ${tests} subset\n`);
  const startedAt = performance.now();
  const reportPath = join(reports, `node-${line}.json`);
  const run = spawnSync(
    "npx",
    [
      "-y",
      `node@${line}`,
      "node_modules/vitest/vitest.mjs",
      "run",
      "--reporter=default",
      "--reporter=json",
      "--reporter=./test/support/flaky-reporter.ts",
      `--outputFile.json=${reportPath}`,
      ...PATHS[tests],
    ],
    { stdio: "inherit", timeout: TIMEOUT_MS[tests], killSignal: "SIGKILL" },
  );
  results.push({
    line,
    version,
    what: tests,
    ok: run.status === 0,
    seconds: Math.round((performance.now() - startedAt) / 1000),
    failures: run.status === 0 ? [] : failuresIn(reportPath),
    note:
      run.status === 0
        ? ""
        : run.error
          ? `timed out or failed to start: ${run.error.message}`
          : `exit ${run.status ?? run.signal}`,
  });
}

console.log("\nline  version    tests        result  seconds");
for (const r of results) {
  console.log(
    `${String(r.line).padEnd(6)}${r.version.padEnd(11)}${r.what.padEnd(13)}${(r.ok ? "passed" : "FAILED").padEnd(8)}${String(r.seconds).padStart(7)}  ${r.note}`,
  );
}
for (const r of results) {
  for (const failure of r.failures ?? []) console.log(`Node ${r.line} failed: ${failure}`);
}
rmSync(reports, { recursive: true, force: true });
process.exit(results.every((r) => r.ok) ? 0 : 1);
