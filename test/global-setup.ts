import { spawnSync } from "node:child_process";

/**
 * Builds `dist/` once, so tests that start real agent processes run the current code. Type errors
 * alone do not stop the run (`npm run typecheck` reports them; the emitted code is still tested), but
 * a build that could not run, or that failed without reporting type errors, does: the process tests
 * would otherwise run against a stale `dist/`.
 */
export default function setup(): void {
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
