// Hand-written mutants of the claims the process-level tests make: for each one, a small change that
// breaks one guarantee (per-host exclusivity, the per-IP limit, robots.txt, host hand-overs, the
// graceful leave, retries across owners, the stats), applied to a copy of the committed tree, and the
// named tests that must then fail. Prints a table: each mutant killed (a named test failed) or
// SURVIVED (all passed: a hole in the tests). Exits 1 when one survived.
// Takes a few minutes (each mutant builds dist/ and runs its tests with real processes); on demand,
// not in CI:  node bench/mutants.mjs [--only NAME,...] [--json] [--keep]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { parseBenchFlags } from "./lib/flags.mjs";
import { MUTANTS } from "./lib/mutant-list.mjs";
import { formatTable } from "./lib/report.mjs";

const REPO = resolve(fileURLToPath(import.meta.url), "../..");

const FLAGS = {
  only: { type: "string", help: "comma-separated mutant names (default: all)" },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the mutated copy of the tree and print where" },
};
const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/mutants.mjs [flags]");
const chosen =
  flags.only === undefined ? MUTANTS : MUTANTS.filter((m) => flags.only.split(",").includes(m.name));
if (chosen.length === 0) throw new Error(`--only: no mutant named ${flags.only}`);

// The committed tree, in a folder of its own: the working tree is never touched.
const dir = mkdtempSync(join(tmpdir(), "ubicrawl-mutants-"));
execFileSync("sh", ["-c", `git -C "${REPO}" archive HEAD | tar -x -C "${dir}"`]);
symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));

const results = [];
try {
  for (const mutant of chosen) {
    const path = join(dir, mutant.file);
    const original = readFileSync(path, "utf8");
    const occurrences = original.split(mutant.from).length - 1;
    if (occurrences !== 1)
      throw new Error(`${mutant.name}: ${mutant.file} has its text ${occurrences} times, not once`);
    writeFileSync(path, original.replace(mutant.from, mutant.to));
    const startedAt = performance.now();
    const failed = [];
    try {
      for (const [file, name] of mutant.tests) {
        const run = spawnSync("npx", ["vitest", "run", file, "-t", name], { cwd: dir, encoding: "utf8" });
        // A test that did not run at all (a renamed test) is no kill.
        const ran = /Tests\s+.*\d+ (passed|failed)/.test(
          stripVTControlCharacters(`${run.stdout}${run.stderr}`),
        );
        if (!ran) throw new Error(`${mutant.name}: no test named "${name}" ran in ${file}`);
        if (run.status !== 0) failed.push(`${file} > ${name}`);
      }
    } finally {
      writeFileSync(path, original);
    }
    results.push({ ...mutant, killedBy: failed, seconds: (performance.now() - startedAt) / 1000 });
    process.stderr.write(
      `${mutant.name}: ${failed.length > 0 ? `killed by ${failed.join("; ")}` : "SURVIVED"}\n`,
    );
  }
} finally {
  if (flags.keep) process.stderr.write(`mutated copy kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}

if (flags.json) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  const rows = results.map((r) => [
    r.name,
    r.claim,
    r.killedBy.length > 0 ? `killed (${r.killedBy.length}/${r.tests.length} tests)` : "SURVIVED",
    r.seconds.toFixed(0),
  ]);
  process.stdout.write(`${formatTable(["mutant", "claim", "outcome", "s"], rows)}\n`);
}
process.exitCode = results.some((r) => r.killedBy.length === 0) ? 1 : 0;
