import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testwebCommand } from "../../src/cli/testweb-command.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { parseHostsFile } from "./helpers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-testweb-command-"));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `ubicrawl testweb --truth-only …` in this process; its exit code and what it wrote on stderr. */
async function truthOnly(args: string[]): Promise<{ code: number; stderr: string }> {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  const code = await testwebCommand([
    "--truth-only",
    ...["--hosts-file", join(dir, "hosts"), "--truth", join(dir, "truth")],
    ...args,
  ]);
  vi.restoreAllMocks();
  return { code, stderr: lines.join("") };
}

describe("ubicrawl testweb: the web's shape", () => {
  it("gives the biggest host --biggest-host-percent of the articles and links --gone-hosts dead hosts", async () => {
    const { code, stderr } = await truthOnly([
      ...["--hosts", "40", "--pages", "4000", "--seed", "5"],
      ...["--max-articles-per-host", "200", "--biggest-host-percent", "30", "--gone-hosts", "6"],
    ]);
    expect(code).toBe(0);
    const urls = (await readFile(join(dir, "truth"), "utf8")).split("\n").filter((line) => line !== "");
    const perHost = new Map<string, number>();
    for (const url of urls) {
      const host = new URL(url).hostname;
      perHost.set(host, (perHost.get(host) ?? 0) + 1);
    }
    const [biggest, second] = [...perHost].sort((a, b) => b[1] - a[1]);
    // 30% of 3,333 articles is 1,000 of them, past the cap of 200; the next host stays under the cap
    // (its URLs are its articles and a fifth more, sections, lists and dead links).
    expect(biggest?.[1]).toBeGreaterThan(1000);
    expect(second?.[1]).toBeLessThan(200 * 1.5);
    expect(stderr).toMatch(
      new RegExp(
        `6 unresolvable hosts.*biggest host ${biggest?.[0].replaceAll(".", "\\.")}: ${biggest?.[1]} URLs \\(\\d+\\.\\d%\\)`,
      ),
    );
    const names = [...parseHostsFile(await readFile(join(dir, "hosts"), "utf8")).keys()];
    expect(names.some((name) => name.startsWith("gone"))).toBe(false);
  });

  it("rejects shape flags out of range, naming the flag", async () => {
    for (const [flag, value] of [
      ["--biggest-host-percent", "0"],
      ["--biggest-host-percent", "91"],
      ["--gone-hosts", "0"],
      ["--max-articles-per-host", "4"],
    ] as const) {
      let caught: unknown;
      try {
        await testwebCommand(["--truth-only", flag, value]);
      } catch (error) {
        caught = error;
      }
      expect(isUbiError(caught, ErrorCode.InvalidArgument), `${flag} ${value}`).toBe(true);
      expect(String((caught as Error).message)).toContain(flag);
    }
  });

  it("lists the shape flags in its --help", async () => {
    let out = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    expect(await testwebCommand(["--help"])).toBe(0);
    for (const flag of ["--max-articles-per-host N", "--biggest-host-percent N", "--gone-hosts N"]) {
      expect(out).toContain(flag);
    }
  });
});
