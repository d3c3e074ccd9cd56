// What a `ubicrawl` process pays to load its code before it does anything: the CPU and wall time of
// `ubicrawl --version`, `stats --help` and `agent --help` (each loads its command's code whole, as the
// command itself does), from the bundle `bin/ubicrawl` runs (dist/bundle/, scripts/bundle.mjs) against
// the same commands from tsc's modules one by one (dist/cli/main.js), side by side, alternating.
// Every agent, `ctl` and `stats` process, the tests' hundreds included, starts on this. The CPU is the
// child's user + system time by GNU time (`time`, a Debian package).
// Run after `npm run build`:  node bench/startup.mjs [--rounds 10] [--json]

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseBenchFlags } from "./lib/flags.mjs";
import { fixed, formatTable, median } from "./lib/report.mjs";

const FLAGS = {
  rounds: { type: "integer", help: "alternating runs of each command each way", default: 10, min: 1 },
  json: { type: "boolean", help: "print JSON instead of a table" },
};
const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/startup.mjs [flags]");

const ROOT = fileURLToPath(new URL("../", import.meta.url));
for (const built of ["dist/cli/main.js", "dist/bundle/main.js"]) {
  if (!existsSync(`${ROOT}${built}`)) throw new Error(`${built} is missing: run \`npm run build\` first`);
}
const TIME = "/usr/bin/time";
if (!existsSync(TIME)) throw new Error(`${TIME} is missing: install GNU time (Debian package "time")`);

/** How each way starts the CLI: the command line before the subcommand's arguments. */
const WAYS = {
  bundle: [process.execPath, `${ROOT}bin/ubicrawl`],
  modules: [
    process.execPath,
    "--input-type=module",
    "-e",
    // As bin/ubicrawl does: Node 22.1+ keeps compiled code between runs (a no-op on Node 20).
    `(await import("node:module")).default.enableCompileCache?.();
     const { main } = await import(${JSON.stringify(`${ROOT}dist/cli/main.js`)});
     process.exitCode = await main(process.argv.slice(1));`,
    // What follows is the command's, not node's (`--version` would be node's own).
    "--",
  ],
};
const COMMANDS = [["--version"], ["stats", "--help"], ["agent", "--help"]];

/** Wall and CPU seconds of one run of `argv`. */
function timed(argv) {
  const result = spawnSync(TIME, ["-f", "%e %U %S", ...argv], { encoding: "utf8" });
  if (result.status !== 0)
    throw new Error(`${argv.join(" ")} failed (exit ${result.status}): ${result.stderr}`);
  const [wall, user, system] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { wallS: wall, cpuS: user + system };
}

const rows = [];
for (const command of COMMANDS) {
  const runs = { bundle: [], modules: [] };
  for (let round = 0; round < flags.rounds; round++) {
    for (const way of round % 2 === 0 ? ["bundle", "modules"] : ["modules", "bundle"]) {
      runs[way].push(timed([...WAYS[way], ...command]));
    }
  }
  const cpu = (way) => median(runs[way].map((run) => run.cpuS)) * 1000;
  const wall = (way) => median(runs[way].map((run) => run.wallS)) * 1000;
  rows.push({
    command: `ubicrawl ${command.join(" ")}`,
    modulesCpuMs: cpu("modules"),
    bundleCpuMs: cpu("bundle"),
    modulesWallMs: wall("modules"),
    bundleWallMs: wall("bundle"),
  });
}

if (flags.json) console.log(JSON.stringify(rows, null, 2));
else {
  console.log(
    `Start-up of a ubicrawl process on Node ${process.versions.node} (median of ${flags.rounds} alternating runs)\n`,
  );
  console.log(
    formatTable(
      ["command", "modules CPU ms", "bundle CPU ms", "ratio", "modules wall ms", "bundle wall ms"],
      rows.map((row) => [
        row.command,
        fixed(row.modulesCpuMs, 0),
        fixed(row.bundleCpuMs, 0),
        `${fixed(row.bundleCpuMs / row.modulesCpuMs, 2)}×`,
        fixed(row.modulesWallMs, 0),
        fixed(row.bundleWallMs, 0),
      ]),
    ),
  );
}
