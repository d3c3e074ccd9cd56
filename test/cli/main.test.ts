import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, runUbicrawl } from "../agent/harness.js";

describe("ubicrawl (the command list)", () => {
  it("lists every command, and loads each only when it is run", async () => {
    const list = await runUbicrawl(["--help"]).waitForExit(20_000);
    expect(list.code).toBe(0);
    for (const name of ["agent", "certs", "cluster", "stats", "testweb"]) {
      expect(list.stdout).toMatch(new RegExp(`^  ${name}\\s+\\S`, "m"));
    }
    // Each command's own --help comes from its own module, loaded on demand.
    for (const [name, flag] of [
      ["stats", /--agent HOST:PORT/],
      ["testweb", /--hosts N/],
    ] as const) {
      const help = await runUbicrawl([name, "--help"]).waitForExit(20_000);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(flag);
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
