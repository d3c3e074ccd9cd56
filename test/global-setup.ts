import { spawnSync } from "node:child_process";

/**
 * Builds `dist/` once, so tests that start real agent processes run the current code. Type errors
 * do not stop the build here (`npm run typecheck` reports them); the emitted code is still tested.
 */
export default function setup(): void {
  const result = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json", "--noEmitOnError", "false"], {
    encoding: "utf8",
  });
  if (result.status !== 0 && result.stdout.trim() !== "") {
    process.stderr.write(
      `warning: the build reported type errors (run npm run typecheck):\n${result.stdout}`,
    );
  }
}
