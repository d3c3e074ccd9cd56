import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type InProcessRun, ubicrawlInProcess } from "../support/in-process-cli.js";
import { parseHostsFile } from "./helpers.js";

/**
 * `ubicrawl testweb`, run in this process: the web it makes (--truth-only: its files written, nothing
 * served), its refusals and its help. The test web served by a real process until SIGTERM:
 * test/bench/processes.test.ts.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-testweb-command-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `ubicrawl testweb --truth-only …` in this process. */
function truthOnly(args: string[]): Promise<InProcessRun> {
  return ubicrawlInProcess([
    "testweb",
    "--truth-only",
    ...["--hosts-file", join(dir, "hosts"), "--truth", join(dir, "truth")],
    ...args,
  ]);
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

  it("rejects shape flags out of range, naming the flag, with exit 2", async () => {
    for (const [flag, value] of [
      ["--biggest-host-percent", "0"],
      ["--biggest-host-percent", "91"],
      ["--gone-hosts", "0"],
      ["--max-articles-per-host", "4"],
    ] as const) {
      const result = await ubicrawlInProcess(["testweb", "--truth-only", flag, value]);
      expect(result.code, `${flag} ${value}`).toBe(2);
      expect(result.stderr).toMatch(/^ubicrawl testweb: .*\[UBI_ERR_INVALID_ARGUMENT\]\n$/);
      expect(result.stderr).toContain(flag);
    }
  });

  it("writes its files and says what it would serve with --truth-only, and leaves no signal handler", async () => {
    const [sigint, sigterm] = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")];
    const result = await truthOnly(["--hosts", "10", "--pages", "200", "--seeds-file", join(dir, "seeds")]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^truth: \d+ URLs, /m);
    const seeds = (await readFile(join(dir, "seeds"), "utf8")).trim().split("\n");
    // 10 hosts, and the dead hosts and mirrors the web adds.
    expect(result.stderr).toMatch(/^test web: \d+ hosts on port \d+; seeds: /m);
    expect(result.stderr).toContain(`; seeds: ${seeds.join(" ")}\n`);
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).toEqual([sigint, sigterm]);
  });

  it("lists the shape flags in its --help", async () => {
    const result = await ubicrawlInProcess(["testweb", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: ubicrawl testweb \[--hosts N\]/);
    for (const flag of ["--max-articles-per-host N", "--biggest-host-percent N", "--gone-hosts N"]) {
      expect(result.stdout).toContain(flag);
    }
  });
});
