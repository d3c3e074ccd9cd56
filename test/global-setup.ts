import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Held while one test run builds `dist/`: CI runs the suite on two Node.js lines at once. */
const LOCK = "dist/.build.lock";

/**
 * Builds `dist/` once, so tests that start real agent processes run the current code. Type errors
 * alone do not stop the run (`npm run typecheck` reports them; the emitted code is still tested), but
 * a build that could not run, or that failed without reporting type errors, does: the process tests
 * would otherwise run against a stale `dist/`.
 *
 * Runs side by side (`.ci/run` starts the suite on the machine's Node and on the other lines at once)
 * take turns: the build is incremental, so the second one, finding nothing changed, rewrites no file
 * under the first run's agents.
 */
export default async function setup(): Promise<void> {
  await takeLock();
  try {
    build();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

function build(): void {
  compile();
  // bin/ubicrawl runs the bundle of what tsc emitted (scripts/bundle.mjs), as `npm run build` makes it.
  const bundled = spawnSync(process.execPath, ["scripts/bundle.mjs"], { encoding: "utf8" });
  if (bundled.error || bundled.status !== 0) {
    const why = bundled.error?.message ?? `${bundled.stdout}${bundled.stderr}`.trim();
    throw new Error(
      `bundling dist/ for the tests failed: ${why || `exit ${bundled.status ?? bundled.signal}`}`,
    );
  }
}

/** tsc's build of src/ to dist/. */
function compile(): void {
  const result = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json", "--noEmitOnError", "false"], {
    encoding: "utf8",
  });
  if (result.error) throw new Error(`cannot build dist/ for the tests: ${result.error.message}`);
  if (result.status === 0) return;
  const output = `${result.stdout}${result.stderr}`.trim();
  // tsc reports type errors as "file(line,col): error TSnnnn: …" and still emits (exit code 2).
  if (result.status === 2 && /error TS\d+:/.test(output)) {
    process.stderr.write(`warning: the build reported type errors (run npm run typecheck):\n${output}\n`);
    return;
  }
  throw new Error(
    `building dist/ for the tests failed (exit ${result.status ?? result.signal}): ${output || "no output"}`,
  );
}

/** Creates the lock file with this process's PID, waiting while a live process holds it. */
async function takeLock(): Promise<void> {
  mkdirSync("dist", { recursive: true });
  for (;;) {
    try {
      const fd = openSync(LOCK, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (!holderAlive()) rmSync(LOCK, { force: true });
    else await sleep(200);
  }
}

/** False when the lock's holder is gone (killed mid-build) or unreadable: the lock is stale. */
function holderAlive(): boolean {
  let text: string;
  let ageMs: number;
  try {
    text = readFileSync(LOCK, "utf8");
    ageMs = Date.now() - statSync(LOCK).mtimeMs;
  } catch {
    return true; // just removed: look again
  }
  // Empty between its creation and the write of the PID; empty for long, its holder died in between.
  if (text === "") return ageMs < 5_000;
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
