#!/usr/bin/env node
// Rewrites test/durations.json, the seconds each test file took, from which the test runs start each
// tier's files longest first (test/support/duration-sequencer.ts). Reads vitest's results cache, which
// every run writes (node_modules/.vite/vitest/*/results.json: each file's duration, hooks included, as
// the default reporter prints it), or the caches named:
//
//   npm test && npm run test:durations
//   npm run test:durations -- path/to/results.json ...    # e.g. a CI run's cache
//
// Not a JSON report (--reporter=json): its times of a file span its tests only, leaving out beforeAll
// hooks, where many system tests do their whole crawl (a 169 s crawl showed as 0 s).
//
// The files measured replace their entries; the others keep theirs, so a run of one tier refreshes
// that tier. A file that failed keeps its old entry (a failure's time says little), one under half a
// second is left out (its seconds round to 0: it starts first, where it costs nothing), and entries of
// files that no longer exist are dropped. Seconds are rounded: the order needs no more. Take them from
// a run on a quiet machine: under load every file stretches, and not evenly.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const TABLE = join(ROOT, "test/durations.json");
const CACHE = join(ROOT, "node_modules/.vite/vitest");

/** A test file's path relative to the root, with forward slashes. */
function fromRoot(path) {
  return (isAbsolute(path) ? relative(ROOT, path) : path).split(sep).join("/");
}

/** [file, milliseconds, failed] of each file in a results cache. */
function measured(path) {
  const document = JSON.parse(readFileSync(path, "utf8"));
  if (!Array.isArray(document.results)) {
    throw new Error(`${path}: not a vitest results cache (results.json: { version, results })`);
  }
  // Keys are "project:path"; the value is { duration, failed }.
  return document.results.map(([key, result]) => [
    fromRoot(key.slice(key.indexOf(":") + 1)),
    result.duration,
    result.failed,
  ]);
}

function caches() {
  if (!existsSync(CACHE)) return [];
  return readdirSync(CACHE)
    .map((dir) => join(CACHE, dir, "results.json"))
    .filter((file) => existsSync(file));
}

const inputs = process.argv.length > 2 ? process.argv.slice(2) : caches();
if (inputs.length === 0) {
  process.stderr.write("no results cache: run the tests first, or name a results.json\n");
  process.exit(2);
}

const table = existsSync(TABLE) ? JSON.parse(readFileSync(TABLE, "utf8")) : {};
let updated = 0;
let failed = 0;
for (const input of inputs) {
  for (const [file, ms, fileFailed] of measured(input)) {
    if (!existsSync(join(ROOT, file))) continue;
    if (fileFailed) {
      failed++;
      continue;
    }
    const seconds = Math.round(ms / 1000);
    if (seconds >= 1) table[file] = seconds;
    else delete table[file];
    updated++;
  }
}
let dropped = 0;
for (const file of Object.keys(table)) {
  if (!existsSync(join(ROOT, file))) {
    delete table[file];
    dropped++;
  }
}
const sorted = Object.fromEntries(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(TABLE, `${JSON.stringify(sorted, null, 2)}\n`);
process.stdout.write(
  `${fromRoot(TABLE)}: ${Object.keys(sorted).length} files listed; ${updated} measured, ` +
    `${failed} failed (kept as they were), ${dropped} gone (dropped)\n`,
);
