// `npm run mutation [-- stryker flags]`: runs StrykerJS (stryker.config.json), then prints the score of
// each module (a folder of src/) from its JSON report and lists the surviving mutants, so they can be
// killed or explained in docs/MUTATION.md. Stryker's own break threshold is global; this fails the run
// when any one module scores below BREAK_SCORE. `--summary-only` re-reads the last report.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const REPORT = "reports/mutation/mutation.json";
const SUMMARY = "reports/mutation/summary.md";
/** Least mutation score of each module, in percent (issue 19). */
const BREAK_SCORE = 80;

const args = process.argv.slice(2);
const summaryOnly = args.includes("--summary-only");
const started = Date.now();
if (!summaryOnly) {
  const run = spawnSync("npx", ["stryker", "run", ...args], { stdio: "inherit" });
  if (run.error) throw run.error;
  // Stryker exits non-zero when its global threshold breaks; the report is still written.
  if (run.status !== 0 && run.status !== 1) process.exit(run.status ?? 1);
}
const elapsedMin = ((Date.now() - started) / 60_000).toFixed(1);

const report = JSON.parse(readFileSync(REPORT, "utf8"));
const STATUSES = ["Killed", "Survived", "Timeout", "NoCoverage", "RuntimeError", "CompileError", "Ignored"];
/** @type {Map<string, Record<string, number>>} */
const modules = new Map();
const survivors = [];
for (const [file, { mutants }] of Object.entries(report.files)) {
  const name = dirname(file);
  const counts = modules.get(name) ?? Object.fromEntries(STATUSES.map((s) => [s, 0]));
  modules.set(name, counts);
  for (const mutant of mutants) {
    counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
    if (mutant.status === "Survived" || mutant.status === "NoCoverage") {
      const { line, column } = mutant.location.start;
      const replacement = mutant.replacement?.replace(/\s+/g, " ").slice(0, 80) ?? "";
      survivors.push(
        `- ${file}:${line}:${column} ${mutant.mutatorName} (${mutant.status}): \`${replacement}\``,
      );
    }
  }
}

const score = (c) => {
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  return valid === 0 ? 100 : (100 * detected) / valid;
};
const rows = [...modules.entries()].sort(([a], [b]) => a.localeCompare(b));
const total = Object.fromEntries(STATUSES.map((s) => [s, rows.reduce((sum, [, c]) => sum + c[s], 0)]));
const line = (name, c) =>
  `| ${name} | ${c.Killed + c.Survived + c.Timeout + c.NoCoverage} | ${c.Killed} | ${c.Survived} | ${c.Timeout} | ${c.NoCoverage} | ${score(c).toFixed(2)} |`;
const table = [
  "| module | mutants | killed | survived | timeout | no coverage | score % |",
  "|---|--:|--:|--:|--:|--:|--:|",
  ...rows.map(([name, c]) => line(name, c)),
  line("**all**", total),
].join("\n");
const text = `${table}\n\n${summaryOnly ? "" : `Run time: ${elapsedMin} min.\n\n`}Surviving mutants (${survivors.length}):\n\n${survivors.join("\n")}\n`;
writeFileSync(SUMMARY, text);
process.stdout.write(`\n${text}\nWritten to ${SUMMARY}.\n`);

const weak = rows.filter(([, c]) => score(c) < BREAK_SCORE).map(([name]) => name);
if (weak.length > 0) {
  process.stderr.write(`mutation score below ${BREAK_SCORE}% in: ${weak.join(", ")}\n`);
  process.exit(1);
}
