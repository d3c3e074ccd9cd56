import { execFileSync } from "node:child_process";

/** Builds `dist/` once, so tests that start real agent processes run the current code. */
export default function setup(): void {
  execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
