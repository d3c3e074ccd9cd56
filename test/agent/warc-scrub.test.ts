import { open, readFile, stat, truncate } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { CrawlReport } from "../../src/report/index.js";
import { CDXJ_SUFFIX, cdxjEntries } from "../../src/storage/cdxj.js";
import {
  agentArgs,
  listWarcFiles,
  logEvent,
  runUbicrawl,
  servedPages,
  spawnAgent,
  startWebFixture,
  type UbicrawlProcess,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";

/**
 * The running check of finished WARC files (--scrub-interval-ms): a real agent whose finished WARC
 * file is damaged in place while it runs says so (`warc-damaged`, UBI_ERR_STORAGE_CORRUPT), counts
 * it in /metrics and fetches the pages whose records no longer read back, without a restart.
 */

let fixture: WebFixture;

beforeAll(async () => {
  fixture = await startWebFixture({ hosts: 8, pages: 400, seed: 7 });
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
});

/** The value of an unlabelled metric in a Prometheus text exposition. */
function metric(text: string, name: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** A crawl of agent `id` to its end, then the agent restarted alone in a cluster of its own, with
 * nothing to crawl (so it keeps running), checking a file every 200 ms; its file and its metrics. */
async function crawledThenRunning(id: string) {
  const first = await spawnAgent(fixture, { id }).waitForExit(90_000);
  expect(first.code, first.stderr).toBe(0);
  const [file] = await listWarcFiles(`${fixture.dir}/data-${id}`);
  if (file === undefined) throw new Error("the crawl wrote no WARC file");
  fixture.web.recorder.reset();
  const running: UbicrawlProcess = runUbicrawl(
    agentArgs(fixture, {
      id,
      exitWhenDone: false,
      delayMs: 0,
      flags: ["--listen", "127.0.0.1:0", "--insecure", "--scrub-interval-ms", "200", "--http", "127.0.0.1:0"],
    }),
    { cwd: fixture.dir },
  );
  let consoleUrl = "";
  await waitFor(
    () => {
      if (running.exited) throw new Error(`the agent exited:\n${running.stderr()}`);
      consoleUrl = String(logEvent(running.stderr(), "console")?.url ?? "");
      return consoleUrl !== "";
    },
    "the console",
    30_000,
  );
  const metrics = async () => (await fetch(`${consoleUrl}metrics`)).text();
  // Read back whole first: nothing found, nothing fetched.
  await waitFor(
    async () => (metric(await metrics(), "ubicrawl_warc_scrubbed_files_total") ?? 0) >= 2,
    "the file read back twice",
    30_000,
  );
  expect(metric(await metrics(), "ubicrawl_warc_damaged_files_total")).toBe(0);
  expect(servedPages(fixture.web.recorder).size).toBe(0);
  return { file, running, metrics };
}

/** The `warc-damaged` warning of `running`'s check, once it came. */
async function damageFound(running: UbicrawlProcess) {
  await waitFor(() => logEvent(running.stderr(), "warc-damaged") !== undefined, "the damage found", 30_000);
  const warning = logEvent(running.stderr(), "warc-damaged");
  expect(warning).toMatchObject({ level: "warn", code: ErrorCode.StorageCorrupt, found: "scrub" });
  return warning as NonNullable<typeof warning>;
}

describe("the running check of finished WARC files", () => {
  it("finds a file damaged in place while the agent runs, and fetches its lost pages again", async () => {
    const { file, running, metrics } = await crawledThenRunning("s1");
    try {
      // Bytes overwritten in the middle of a record the index lists (a bad sector, a stray write).
      const entries = cdxjEntries(await readFile(file + CDXJ_SUFFIX, "utf8")) ?? [];
      const damaged = entries[Math.floor(entries.length / 2)];
      if (damaged === undefined) throw new Error("the index lists no record");
      const handle = await open(file, "r+");
      await handle.write(Buffer.alloc(64, 0x55), 0, 64, damaged.offset + Math.floor(damaged.length / 2));
      await handle.close();

      const warning = await damageFound(running);
      expect(warning.msg).toContain(file);
      // Only the record overwritten: each record is its own gzip member, checked alone.
      const recordsLost = warning.recordsLost as number;
      expect(recordsLost).toBe(1);
      expect(warning.pagesLost).toBe(1);
      expect(warning.examples).toEqual([damaged.url]);
      // The damaged record's page is fetched again, at once (nothing else is queued).
      await waitFor(
        () => servedPages(fixture.web.recorder).has(damaged.url),
        "the damaged page fetched again",
        30_000,
      );
      await waitFor(
        () => servedPages(fixture.web.recorder).size === recordsLost,
        "every lost page fetched again",
        30_000,
      );
      const text = await metrics();
      expect(metric(text, "ubicrawl_warc_damaged_files_total")).toBe(1);
      expect(metric(text, "ubicrawl_warc_lost_records_total")).toBe(recordsLost);
    } finally {
      running.kill("SIGTERM");
      await running.waitForExit(30_000);
    }
  }, 200_000);

  it("finds a file cut short while the agent runs, and a restart then finds every page archived", async () => {
    const { file, running } = await crawledThenRunning("s2");
    const size = (await stat(file)).size;
    try {
      await truncate(file, size - 3000);
      const warning = await damageFound(running);
      const lost = warning.pagesLost as number;
      expect(lost).toBeGreaterThan(0);
      expect(warning.recordsLost).toBe(lost);
      await waitFor(
        () => servedPages(fixture.web.recorder).size === lost,
        "the pages of the records cut off fetched again",
        30_000,
      );
    } finally {
      running.kill("SIGTERM");
      await running.waitForExit(30_000);
    }
    // The next start cuts the torn record; every page it finds lost was fetched again already.
    const restart = await spawnAgent(fixture, { id: "s2" }).waitForExit(90_000);
    expect(restart.code, restart.stderr).toBe(0);
    expect(logEvent(restart.stderr, "warc-damaged")?.pagesLost).toBe(0);
    const report = await runUbicrawl(["report", "--json", `${fixture.dir}/data-s2`]).waitForExit(60_000);
    expect(report.code, report.stderr).toBe(0);
    expect((JSON.parse(report.stdout) as CrawlReport).archives).toMatchObject({
      unarchived: 0,
      unreadable: [],
    });
  }, 200_000);
});
