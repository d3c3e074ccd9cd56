// CI gate on security advisories: `npm audit` must report no high or critical advisory in the
// dependencies. When the registry's audit endpoint cannot be reached or refuses the request (some
// mirrors answer 405), the advisories cannot be checked: say so loudly and do not fail the build on it.
// `node .ci/audit.mjs --report FILE` judges a saved `npm audit --json` report instead (tests the gate).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const reportFlag = process.argv.indexOf("--report");
const output =
  reportFlag > 0
    ? { stdout: readFileSync(process.argv[reportFlag + 1] ?? "", "utf8"), status: 0, stderr: "" }
    : spawnSync("npm", ["audit", "--audit-level=high", "--json"], { encoding: "utf8" });
let report;
try {
  report = JSON.parse(output.stdout);
} catch {
  process.stderr.write(`npm audit printed no JSON (exit ${output.status}):\n${output.stderr}\n`);
  process.exit(1);
}
const counts = report.metadata?.vulnerabilities;
if (counts) {
  const serious = (counts.high ?? 0) + (counts.critical ?? 0);
  const summary = Object.entries(counts)
    .map(([level, count]) => `${level} ${count}`)
    .join(", ");
  process.stdout.write(`npm audit: ${summary}\n`);
  if (serious > 0) {
    for (const [name, finding] of Object.entries(report.vulnerabilities ?? {})) {
      if (finding.severity === "high" || finding.severity === "critical") {
        process.stdout.write(`  ${finding.severity}: ${name} ${finding.range}\n`);
      }
    }
    process.exit(1);
  }
  process.exit(0);
}
const status = report.statusCode ?? report.error?.code ?? "unknown";
process.stdout.write(
  `npm audit: WARNING: the registry's audit endpoint is unavailable (${status}); advisories were NOT checked\n`,
);
