import { copyFile, mkdir, readdir, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { CrawlReport } from "../../src/report/index.js";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { indexCoversFile } from "../../src/storage/warc-indexer.js";
import {
  agentDataDir,
  type ExitResult,
  listWarcFiles,
  logEvent,
  readCrawlLogOf,
  readWarcRecords,
  runUbicrawl,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "../agent/harness.js";

/**
 * Damaged WARC files found at open by a real agent: a file cut short (3,000 bytes off its end) or
 * deleted after the crawl lost records of pages the state calls done. Restarted, the agent says so,
 * naming the file, and fetches those pages again, so every page of its crawl log has a WARC record.
 */

/** Bytes cut off the end of the WARC file (what the operator cut). */
const CUT_BYTES = 3000;

let fixture: WebFixture;
/** A data dir with a whole crawl, copied before each damage. */
let crawled: string;

beforeAll(async () => {
  fixture = await startWebFixture({ hosts: 8, pages: 600, seed: 4 });
  const first = await spawnAgent(fixture, { id: "a1" }).waitForExit(90_000);
  expect(first.code, first.stderr).toBe(0);
  crawled = agentDataDir(fixture, { id: "a1" });
}, 120_000);

afterAll(async () => {
  await fixture?.stop();
});

/** A copy of the crawled data dir (for agent `a1`), to damage. */
async function copyOfCrawl(name: string): Promise<string> {
  const dir = join(fixture.dir, name);
  await copyTree(crawled, dir);
  return dir;
}

async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (entry.isDirectory()) await copyTree(join(from, entry.name), join(to, entry.name));
    else await copyFile(join(from, entry.name), join(to, entry.name));
  }
}

/** Pages of the crawl log: fetches, not attempts or failures. */
function pagesOf(log: readonly CrawlLogEntry[]): Set<string> {
  return new Set(
    log.filter((entry) => entry.status > 0 && entry.willRetry !== true).map((entry) => entry.url),
  );
}

/** URLs with a response or revisit record in `dataDir`'s WARC files. */
async function archivedUrls(dataDir: string): Promise<Set<string>> {
  const urls = new Set<string>();
  for (const record of await readWarcRecords(dataDir)) {
    const url = record.headers.get("warc-target-uri");
    if ((record.type === "response" || record.type === "revisit") && url !== undefined) urls.add(url);
  }
  return urls;
}

/** `ubicrawl report --json` of `dataDir` (against truth file `truth`, if given), parsed. */
async function reportOf(dataDir: string, truth?: string): Promise<CrawlReport> {
  const args = truth === undefined ? [] : ["--truth", truth];
  const run = await runUbicrawl(["report", "--json", ...args, dataDir]).waitForExit(60_000);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as CrawlReport;
}

/** Restarts agent `a1` on `dataDir`, counting how often each page is served meanwhile. */
async function restartOn(dataDir: string): Promise<{ exit: ExitResult; served: Map<string, number> }> {
  fixture.web.recorder.reset();
  const exit = await spawnAgent(fixture, { id: "a1", dataDir }).waitForExit(90_000);
  return { exit, served: servedPages(fixture.web.recorder) };
}

describe("damaged WARC files", () => {
  it("a file cut short: the agent names it at restart and fetches its lost pages again", async () => {
    const dataDir = await copyOfCrawl("cut");
    const pages = pagesOf(await readCrawlLogOf(dataDir));
    const [file] = await listWarcFiles(dataDir);
    if (file === undefined) throw new Error("the crawl wrote no WARC file");
    const size = (await stat(file)).size;
    expect((await reportOf(dataDir)).archives).toMatchObject({ files: 1, unarchived: 0, unreadable: [] });
    await truncate(file, size - CUT_BYTES);
    // Before the restart, the report reads the WARC file: the pages whose records were cut are counted.
    const before = await reportOf(dataDir);
    expect(before.archives?.unarchived).toBeGreaterThan(0);
    const text = await runUbicrawl(["report", dataDir]).waitForExit(60_000);
    expect(text.stdout).toContain(`WARC records MISSING: ${before.archives?.unarchived} pages`);

    const { exit, served } = await restartOn(dataDir);
    expect(exit.code, exit.stderr).toBe(0);
    const warning = logEvent(exit.stderr, "warc-damaged");
    expect(warning).toMatchObject({
      level: "warn",
      code: ErrorCode.StorageCorrupt,
      files: [{ path: file, syncedBytes: size, foundBytes: expect.any(Number) }],
    });
    expect(warning?.msg).toContain(file);
    const lost = warning?.pagesLost as number;
    expect(lost).toBeGreaterThan(0);
    expect(warning?.msg).toContain(`${lost} page`);
    expect(lost).toBe(before.archives?.unarchived);
    // Only the lost pages are fetched again, each once, and every page has its record again.
    expect([...served.values()].reduce((sum, count) => sum + count, 0)).toBe(lost);
    expect([...served.keys()].every((url) => pages.has(url))).toBe(true);
    const archived = await archivedUrls(dataDir);
    expect([...pages].filter((url) => !archived.has(url))).toEqual([]);
    expect((await reportOf(dataDir)).archives).toMatchObject({ unarchived: 0, unreadable: [] });
    // The cut file's index ends with its last whole record, where the file now ends.
    expect(await indexCoversFile(file)).toBe(true);

    // Found and repaired once: the next start says nothing and fetches nothing.
    const again = await restartOn(dataDir);
    expect(again.exit.code, again.exit.stderr).toBe(0);
    expect(logEvent(again.exit.stderr, "warc-damaged")).toBeUndefined();
    expect(again.served.size).toBe(0);
  }, 200_000);

  it("a file deleted: the agent names it at restart and fetches all its pages again", async () => {
    const dataDir = await copyOfCrawl("deleted");
    const pages = pagesOf(await readCrawlLogOf(dataDir));
    const files = await listWarcFiles(dataDir);
    for (const file of files) await rm(file);
    // The crawl's own pages as the truth: covered by the crawl log, but no longer by WARC records.
    const truth = join(fixture.dir, "pages.txt");
    await writeFile(truth, `${[...pages].join("\n")}\n`);
    const before = await reportOf(dataDir, truth);
    expect(before.archives).toMatchObject({ files: 0, unarchived: pages.size });
    expect(before.coverage).toMatchObject({ covered: 0, truthSize: pages.size, outsideTruth: 0 });

    const { exit, served } = await restartOn(dataDir);
    expect(exit.code, exit.stderr).toBe(0);
    const warning = logEvent(exit.stderr, "warc-damaged");
    expect(warning).toMatchObject({
      level: "warn",
      code: ErrorCode.StorageCorrupt,
      files: files.map((path) => ({ path, foundBytes: 0 })),
      pagesLost: pages.size,
    });
    for (const file of files) expect(warning?.msg).toContain(`${file} is gone`);
    expect(new Set(served.keys())).toEqual(pages);
    const archived = await archivedUrls(dataDir);
    expect([...pages].filter((url) => !archived.has(url))).toEqual([]);
    expect((await reportOf(dataDir, truth)).coverage).toMatchObject({ covered: pages.size, fraction: 1 });
  }, 200_000);
});
