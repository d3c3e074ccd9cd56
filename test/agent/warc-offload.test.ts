import { readdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlReport } from "../../src/report/index.js";
import { cdxjProblems } from "../support/cdxj-check.js";
import {
  type ExitResult,
  logEvent,
  logRecords,
  runUbicrawl,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "./harness.js";

/**
 * `--warc-dir` and `--on-warc-closed` with a real agent: its WARC files written to a folder outside
 * its data dir; a hook that fails leaves them there, and is tried again at the next start; a hook that
 * moves them away is recorded, so a later start neither calls them lost nor fetches their pages again.
 * The data dir records the folder, so `ubicrawl report` and `ubicrawl export` given the data dir read
 * the WARC files there.
 */

const AGENT = { id: "offloader" };
const dataDirOf = () => join(fixture.dir, `data-${AGENT.id}`);

let fixture: WebFixture;
let warcDir: string;
let movedTo: string;
let failedRun: ExitResult;
let filesAfterFailure: string[];
let truthFile: string;
let truthSize: number;
let reportAfterFailure: CrawlReport;
let exportAfterFailure: ExitResult;
let reportAfterMove: CrawlReport;
let movingRun: ExitResult;
let filesAfterMove: string[];
let laterRun: ExitResult;
let servedBeforeLaterRun: number;

/** The hook that moves the file and its index to `movedTo`. */
const moveHook = () =>
  `mkdir -p "${movedTo}" && mv "$UBICRAWL_WARC_FILE" "$UBICRAWL_CDXJ_FILE" "${movedTo}/"`;

/** `ubicrawl report --json --truth` of the agent's data dir. */
async function reportOfDataDir(): Promise<CrawlReport> {
  const run = await runUbicrawl(["report", "--json", "--truth", truthFile, dataDirOf()]).waitForExit(60_000);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as CrawlReport;
}

function totalServed(): number {
  let total = 0;
  for (const count of servedPages(fixture.web.recorder).values()) total += count;
  return total;
}

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 8, hosts: 6, pages: 200 });
  warcDir = join(fixture.dir, "other-volume", "warcs");
  movedTo = join(fixture.dir, "archive-store");
  const flags = (hook: string | undefined) => [
    "--warc-dir",
    warcDir,
    ...(hook === undefined ? [] : ["--on-warc-closed", hook]),
  ];
  failedRun = await spawnAgent(fixture, {
    ...AGENT,
    flags: flags('echo "store unreachable" >&2; exit 3'),
  }).waitForExit(60_000);
  filesAfterFailure = (await readdir(warcDir)).sort();
  const truth = fixture.truth().urls;
  truthSize = truth.length;
  truthFile = join(fixture.dir, "truth.txt");
  await writeFile(truthFile, `${truth.join("\n")}\n`);
  reportAfterFailure = await reportOfDataDir();
  exportAfterFailure = await runUbicrawl([
    "export",
    "--out",
    join(fixture.dir, "data-dir.wacz"),
    dataDirOf(),
  ]).waitForExit(60_000);
  movingRun = await spawnAgent(fixture, { ...AGENT, flags: flags(moveHook()) }).waitForExit(60_000);
  filesAfterMove = await readdir(warcDir);
  reportAfterMove = await reportOfDataDir();
  servedBeforeLaterRun = totalServed();
  laterRun = await spawnAgent(fixture, { ...AGENT, flags: flags(undefined) }).waitForExit(60_000);
}, 200_000);

afterAll(async () => {
  await fixture?.stop();
});

describe("WARC files on another folder, moved off by a hook", () => {
  it("writes the WARC files and their indexes to --warc-dir, none under the data dir", async () => {
    expect(failedRun.code, failedRun.stderr).toBe(0);
    expect(filesAfterFailure.filter((name) => name.endsWith(".warc.gz")).length).toBeGreaterThan(0);
    expect(filesAfterFailure.filter((name) => name.endsWith(".warc.gz.cdxj")).length).toBeGreaterThan(0);
    expect(await readdir(dataDirOf())).not.toContain("warc");
  });

  it("report, given the data dir, computes coverage from the WARC files in --warc-dir", () => {
    const { coverage, archives } = reportAfterFailure;
    expect(archives).toMatchObject({ unarchived: 0, unreadable: [], missingFolders: [] });
    expect(archives?.files).toBe(filesAfterFailure.filter((name) => name.endsWith(".warc.gz")).length);
    expect(coverage).toMatchObject({ covered: truthSize, truthSize });
  });

  it("export, given the data dir, packages the WARC files of --warc-dir", () => {
    expect(exportAfterFailure.code, exportAfterFailure.stderr).toBe(0);
    expect(exportAfterFailure.stdout).toMatch(/index: [1-9]\d* lines/);
  });

  it("logs a failing hook with its exit code and stderr, and leaves the file", () => {
    const failure = logEvent(failedRun.stderr, "warc-offload-failed");
    expect(failure?.exitCode).toBe(3);
    expect(String(failure?.stderr)).toContain("store unreachable");
    expect(logEvent(failedRun.stderr, "warc-offloaded")).toBeUndefined();
  });

  it("offers the files left at the next start, and records those the hook moved", async () => {
    expect(movingRun.code, movingRun.stderr).toBe(0);
    const offloaded = logRecords(movingRun.stderr)
      .filter((record) => record.event === "warc-offloaded")
      .map((record) => record.file);
    const left = filesAfterFailure.filter((name) => name.endsWith(".warc.gz"));
    for (const name of left) expect(offloaded).toContain(name);
    const moved = (await readdir(movedTo)).sort();
    for (const name of left) {
      expect(moved).toContain(name);
      expect(moved).toContain(`${name}.cdxj`);
      expect(await cdxjProblems(join(movedTo, name)), name).toEqual([]);
    }
    expect(filesAfterMove.filter((name) => name.endsWith(".warc.gz"))).toEqual([]);
  });

  it("does not take the moved files for lost: a later start finds no damage and fetches nothing again", () => {
    expect(laterRun.code, laterRun.stderr).toBe(0);
    expect(logEvent(laterRun.stderr, "warc-damaged")).toBeUndefined();
    expect(totalServed()).toBe(servedBeforeLaterRun);
  });

  it("report counts the pages of the files moved off as archived nowhere it can read", () => {
    const { coverage, archives } = reportAfterMove;
    expect(archives?.unarchived).toBeGreaterThan(0);
    expect(coverage?.covered).toBeLessThan(truthSize);
  });

  it("report names a recorded WARC folder missing on this machine, and checks none of its pages", async () => {
    await rename(warcDir, `${warcDir}.gone`);
    try {
      const { coverage, archives } = await reportOfDataDir();
      expect(archives?.missingFolders).toEqual([expect.stringContaining(warcDir)]);
      expect(archives?.unarchived).toBe(0);
      expect(coverage?.covered).toBe(truthSize);
      const text = await runUbicrawl(["report", dataDirOf()]).waitForExit(60_000);
      expect(text.stdout).toContain(`WARC folder not found (its agent's pages not checked): ${warcDir}`);
    } finally {
      await rename(`${warcDir}.gone`, warcDir);
    }
  });

  it("exports the moved files, a folder of WARC files, to one package", async () => {
    const out = join(fixture.dir, "moved.wacz");
    const exported = await runUbicrawl(["export", "--out", out, movedTo]).waitForExit(60_000);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/index: [1-9]\d* lines/);
  });
});
