#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/, from `tsc -p tsconfig.build.json`) into dist/bundle/, which
// bin/ubicrawl runs: each subcommand's code in a few files instead of ~430 modules of ours and a few
// hundred of its packages'. On Node 20, which keeps no compiled code between runs, loading
// `ubicrawl agent`'s modules one by one took ~720 ms of CPU and the bundle's ~290: resolving, reading
// and linking each module cost more than compiling them, and every agent, `ctl` and `stats` process
// starts on it. esbuild, the bundler of the field, writes it (our own code could not).
//
//   node scripts/bundle.mjs            (`npm run build` runs it after tsc)
//
// - The bundle sits two folders below the repository, as dist/cli/ does, so the paths the code takes
//   from `import.meta.url` (package.json, proto/, assets/, bin/) resolve the same from either.
// - `export` runs in a worker thread from the file main.ts names beside itself: an entry of its own.
// - Packages that load files of their own by path stay in node_modules (classic-level's native binary).
// - Source maps are written beside it (node --enable-source-maps maps stack traces back to src/).
// - Only files whose content changed are written, and files no longer part of it removed: a rebuild
//   with nothing changed touches nothing under agents already running from it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const OUT = join(ROOT, "dist/bundle");

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ["dist/cli/main.js", "dist/cli/export-command.js"],
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  external: ["classic-level"],
  // The CommonJS packages bundled into ES modules call require() for Node's own modules and files.
  banner: {
    js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
  },
  write: false,
  logLevel: "warning",
});

mkdirSync(OUT, { recursive: true });
const written = new Set();
for (const file of result.outputFiles) {
  written.add(basename(file.path));
  const same = existsSync(file.path) && readFileSync(file.path).equals(file.contents);
  if (!same) writeFileSync(file.path, file.contents);
}
for (const name of readdirSync(OUT)) {
  if (!written.has(name)) rmSync(join(OUT, name), { force: true });
}
