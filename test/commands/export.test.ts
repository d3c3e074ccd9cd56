import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportCommand } from "../../src/cli/export-command.js";
import { commandInProcess, type InProcessRun } from "../support/in-process-cli.js";

/**
 * `ubicrawl export`'s refusals, run in this process: flags it cannot go on with, an existing --out
 * (refused before anything is read or fetched), folders that are not an agent's data dir, each with
 * exit 2 and nothing written. The command itself is called: `main` runs it in a worker thread, which
 * loads the built module. Exports of real crawls, by a real process (its exit code, its output, the
 * package): test/export.
 */

let dir: string;
/** An agent's data dir with no finished WARC file yet (its warc/ folder empty). */
let dataDir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-export-command-"));
  dataDir = join(dir, "agent-1");
  await mkdir(join(dataDir, "warc"), { recursive: true });
  await writeFile(join(dataDir, "agent-id"), "agent-1\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function exportInProcess(...args: string[]): Promise<InProcessRun> {
  return commandInProcess("export", exportCommand, args);
}

/** `result` is a refusal: exit 2, one line on stderr saying `message`, nothing on stdout. */
function expectRefused(result: InProcessRun, message: string): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toMatch(/^ubicrawl export: .*\[UBI_ERR_INVALID_ARGUMENT\]\n$/);
  expect(result.stderr).toContain(message);
  expect(result.stdout).toBe("");
}

describe("ubicrawl export's refusals", () => {
  it("refuses no --out, nothing to export, --cluster without --agent, and --agent without security", async () => {
    const out = join(dir, "flags.wacz");
    expectRefused(await exportInProcess(dataDir), "--out is required");
    expectRefused(await exportInProcess("--out", out), "name at least one agent's data dir, or --agent");
    expectRefused(await exportInProcess("--out", out, "--cluster", dataDir), "--cluster goes with --agent");
    expectRefused(
      await exportInProcess("--out", out, "--agent", "127.0.0.1:1"),
      "give --tls-ca/--tls-cert/--tls-key, or --insecure",
    );
    await expect(access(out)).rejects.toMatchObject({ code: "ENOENT" });
    // No download folder left beside --out.
    expect((await readdir(dir)).filter((name) => name.startsWith("flags.wacz"))).toEqual([]);
  });

  it("refuses an existing --out without --force, before reading a dir or reaching an agent", async () => {
    const out = join(dir, "again.wacz");
    await writeFile(out, "not a package");
    const message = `${out} exists: give another --out, or --force to replace it`;
    expectRefused(await exportInProcess("--out", out, dataDir), message);
    expectRefused(await exportInProcess("--out", out, join(dir, "missing")), message);
    // No agent listens there: the refusal comes before any call.
    expectRefused(await exportInProcess("--out", out, "--agent", "127.0.0.1:1", "--insecure"), message);
    expect(await readFile(out, "utf8")).toBe("not a package");
  });

  it("refuses a folder that is not an agent's data dir, a missing one, one given twice, and no WARC file", async () => {
    const out = join(dir, "refused.wacz");
    const file = join(dir, "a-file");
    await writeFile(file, "");
    await mkdir(join(dir, "empty"));
    for (const [dirs, message] of [
      [[join(dir, "empty")], "is not an agent's data dir (it has no agent-id, crawl.log or warc/)"],
      [[join(dir, "missing")], `${join(dir, "missing")} does not exist`],
      [[file], `${file} is a file, not an agent's data dir`],
      [[dataDir, dataDir], `${dataDir} is given twice`],
      [[dataDir], `no finished WARC file in ${dataDir}`],
    ] as const) {
      expectRefused(await exportInProcess("--out", out, ...dirs), message);
    }
    await expect(access(out)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("refuses a --seeds file with a line that is not a URL, naming it", async () => {
    const seeds = join(dir, "seeds.txt");
    await writeFile(seeds, "example.com\n");
    expectRefused(
      await exportInProcess("--out", join(dir, "seeds.wacz"), "--seeds", seeds, dataDir),
      `${seeds}:1: "example.com" is not an http(s) URL`,
    );
  });
});

describe("ubicrawl export --help", () => {
  it("gives its flags on stdout", async () => {
    const result = await exportInProcess("--help");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: ubicrawl export --out FILE /);
    expect(result.stdout).toContain("--index auto|cdxj|zipnum");
    expect(result.stderr).toBe("");
  });
});
