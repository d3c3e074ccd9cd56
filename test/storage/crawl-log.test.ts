import { mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import {
  CrawlLog,
  type CrawlLogEntry,
  type CrawlLogInput,
  readCrawlLog,
} from "../../src/storage/crawl-log.js";
import { ManualClock } from "../support/manual-clock.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-crawl-log-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function entry(i: number, extra: Partial<CrawlLogInput> = {}): CrawlLogInput {
  return {
    url: `http://h${i}.test/p?i=${i}`,
    status: i % 5 === 0 ? 0 : 200,
    bytes: i * 100,
    contentType: "text/html",
    links: i,
    durationMs: i * 1.5,
    depth: i % 3,
    ...(i % 5 === 0 ? { error: ErrorCode.ConnectFailed } : {}),
    ...extra,
  };
}

async function readAll(path: string): Promise<CrawlLogEntry[]> {
  const entries: CrawlLogEntry[] = [];
  for await (const e of readCrawlLog(path)) entries.push(e);
  return entries;
}

describe("CrawlLog", () => {
  it("writes one JSON line per fetch that reads back as logged", async () => {
    const clock = new ManualClock(Date.UTC(2024, 1, 2, 3, 4, 5));
    const log = new CrawlLog({ dir: join(dir, "nested") }, { clock });
    await log.open();
    log.append(entry(1, { agent: "a1", ts: "2020-01-01T00:00:00.000Z" }));
    log.append(entry(5, { agent: "a1", retries: 2, note: "line\nbreak" }));
    log.append(entry(7));
    await log.close();

    const text = await readFile(log.path, "utf8");
    expect(log.path).toBe(join(dir, "nested", "crawl.log"));
    expect(text.endsWith("\n")).toBe(true);
    expect(text.split("\n")).toHaveLength(4);
    expect(text.startsWith('{"ts":"2020-01-01T00:00:00.000Z","url":')).toBe(true);
    const entries = await readAll(log.path);
    expect(entries).toEqual([
      { ts: "2020-01-01T00:00:00.000Z", ...entry(1, { agent: "a1" }) },
      { ts: "2024-02-02T03:04:05.000Z", ...entry(5, { agent: "a1", retries: 2, note: "line\nbreak" }) },
      { ts: "2024-02-02T03:04:05.000Z", ...entry(7) },
    ]);
    expect(entries[1]?.error).toBe(ErrorCode.ConnectFailed);
    expect(entries[2]).not.toHaveProperty("error");
    expect(log.lines).toBe(3);
  });

  it("buffers lines until the interval passes, and writes the rest on close", async () => {
    const clock = new ManualClock(Date.UTC(2024, 1, 2, 3, 4, 5));
    const log = new CrawlLog({ dir, flushIntervalMs: 200 }, { clock });
    await log.open();
    log.append(entry(1));
    log.append(entry(2));
    expect(clock.pending).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await stat(log.path)).size).toBe(0);

    clock.advance(199);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await stat(log.path)).size).toBe(0);
    clock.advance(1);
    await vi.waitFor(async () => expect(await readAll(log.path)).toHaveLength(2), { timeout: 10_000 });

    log.append(entry(3));
    await log.close();
    expect((await readAll(log.path)).map((e) => e.url)).toEqual([1, 2, 3].map((i) => entry(i).url));
    expect(clock.pending).toBe(0);
    await log.close();
  });

  it("writes a batch as soon as flushEveryLines lines are buffered", async () => {
    const clock = new ManualClock(Date.UTC(2024, 1, 2, 3, 4, 5));
    const log = new CrawlLog({ dir, flushEveryLines: 10 }, { clock });
    await log.open();
    for (let i = 0; i < 25; i++) log.append(entry(i));
    await vi.waitFor(async () => expect(await readAll(log.path)).toHaveLength(20), { timeout: 10_000 });
    await log.flush();
    expect(await readAll(log.path)).toHaveLength(25);
    await log.close();
  });

  it("cuts a torn last line on open and appends after the last whole line", async () => {
    const path = join(dir, "crawl.log");
    const whole = [
      JSON.stringify({ ts: "2024-01-01T00:00:00.000Z", ...entry(1) }),
      JSON.stringify({ ts: "2024-01-01T00:00:01.000Z", ...entry(2) }),
    ];
    // A long torn line, so the scan back for the newline crosses read chunks.
    await writeFile(
      path,
      `${whole.join("\n")}\n{"ts":"2024-01-01T00:00:02.000Z","url":"http://x.test/${"a".repeat(100_000)}`,
    );
    const log = new CrawlLog({ dir });
    await log.open();
    expect(await readFile(path, "utf8")).toBe(`${whole.join("\n")}\n`);
    log.append(entry(3));
    await log.close();
    expect((await readAll(path)).map((e) => e.url)).toEqual([1, 2, 3].map((i) => entry(i).url));
  });

  it("empties a log whose only line is torn, and creates a missing one", async () => {
    await writeFile(join(dir, "torn.log"), '{"ts":"2024-01-01T00:00:0');
    const torn = new CrawlLog({ dir, fileName: "torn.log" });
    await torn.open();
    expect((await stat(torn.path)).size).toBe(0);
    await torn.close();
    const fresh = new CrawlLog({ dir, fileName: "fresh.log" });
    await fresh.open();
    await fresh.close();
    expect((await stat(fresh.path)).size).toBe(0);
  });

  it("validates options and refuses lines when not open", async () => {
    const bad = [
      { dir: "" },
      { dir, fileName: "a/b.log" },
      { dir, flushEveryLines: 0 },
      { dir, flushIntervalMs: -1 },
    ];
    for (const options of bad) {
      expect(() => new CrawlLog(options)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
    const log = new CrawlLog({ dir });
    expect(() => log.append(entry(1))).toThrow(expect.objectContaining({ code: ErrorCode.StorageFailed }));
    await log.open();
    expect(() => log.append({ ...entry(1), big: 1n })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    await log.close();
    expect(() => log.append(entry(2))).toThrow(expect.objectContaining({ code: ErrorCode.StorageFailed }));
    expect(await readAll(log.path)).toEqual([]);
  });

  it("rejects flushes while the disk refuses the lines, and keeps them for the next try", async () => {
    // /dev/full takes the open and refuses every write with ENOSPC.
    await symlink("/dev/full", join(dir, "full.log"));
    const clock = new ManualClock(0);
    const log = new CrawlLog({ dir, fileName: "full.log", flushEveryLines: 2 }, { clock });
    await log.open();
    log.append(entry(1));
    log.append(entry(2));
    log.append(entry(3));
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(log.flush()).rejects.toMatchObject({ code: ErrorCode.StorageFailed });
    }
    expect(log.lines).toBe(0);
    await expect(log.close()).rejects.toMatchObject({ code: ErrorCode.StorageFailed });
  });
});
