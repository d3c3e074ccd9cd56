import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runUbicrawl } from "../agent/harness.js";

describe("ubicrawl (the command list)", () => {
  it("lists every command", async () => {
    // Each command's own --help, in this process: test/commands (and test/testweb for testweb).
    const list = await runUbicrawl(["--help"]).waitForExit(20_000);
    expect(list.code).toBe(0);
    for (const name of [
      "agent",
      "certs",
      "cluster",
      "ctl",
      "experiment",
      "export",
      "repair",
      "report",
      "stats",
      "testweb",
    ]) {
      expect(list.stdout).toMatch(new RegExp(`^  ${name}\\s+\\S`, "m"));
    }
  });

  it("rejects an unknown command or none with the usage and exit code 2", async () => {
    const unknown = await runUbicrawl(["crawl-everything"]).waitForExit(20_000);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "crawl-everything"/);
    expect(unknown.stderr).toMatch(/Usage: ubicrawl <command>/);
    const none = await runUbicrawl([]).waitForExit(20_000);
    expect(none.code).toBe(2);
    expect(none.stdout).toMatch(/Usage: ubicrawl <command>/);
  });

  it("prints its version (the package's) and Node's", async () => {
    const manifest = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-V"]) {
      const result = await runUbicrawl([flag]).waitForExit(20_000);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`ubicrawl ${manifest.version} (Node.js ${process.version})\n`);
    }
  });
});
