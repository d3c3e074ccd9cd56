import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { seededRandom } from "../../bench/lib/prng.mjs";
import { ErrorCode } from "../../src/errors.js";
import {
  CrawlLog,
  getMeta,
  metaOp,
  readCrawlLog,
  StateStore,
  WarcWriter,
  warcFileCompression,
} from "../../src/storage/index.js";
import { readWarcFile } from "../../src/storage/warc-reader.js";
import { skipWithout } from "../support/tools.js";
import { UnsyncedMount, unsyncedFsUnavailable } from "./power-cut/unsynced-fs.js";

/**
 * The storage pieces' sync promises, checked where they can fail: on a file system whose unsynced
 * bytes a power cut drops. What each says is durable must survive the cut; what it did not sync is
 * gone (so the cut is real).
 */

/** The FUSE layer is missing here (said aloud; under CI=true, a failure). */
const skip = skipWithout(unsyncedFsUnavailable());

/** Writeback saved nothing: every file is cut back to its last fsync. */
const NOTHING_WRITTEN_BACK = () => 0;

let dir: string;
let lower: string;
let mountDir: string;
let mount: UnsyncedMount | undefined;

beforeEach(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-power-cut-"));
  lower = join(dir, "disk");
  mountDir = join(dir, "mnt");
  await mkdir(lower);
  await mkdir(mountDir);
  mount = await UnsyncedMount.mount(lower, mountDir, join(dir, "durable.json"));
});

afterEach(async () => {
  await mount?.release();
  mount = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function cut(random: () => number = NOTHING_WRITTEN_BACK): Promise<void> {
  await (mount as UnsyncedMount).powerCut(random);
  mount = undefined;
}

function exchange(i: number) {
  const body = Buffer.from(`<html><p>page ${i} ${"x".repeat(2000)}</p></html>`);
  return {
    url: `http://site.test/p/${i}`,
    ip: "127.0.0.1",
    date: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)),
    requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\nHost: site.test\r\n\r\n`,
    responseHeaderBlock: `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    body,
  };
}

/** What an agent restarted after the cut finds: it repairs the WARC files, then they are read. */
async function restartedWarc(): Promise<{ urls: Set<string>; recoveredFiles: number }> {
  const reopened = new WarcWriter({ dir: join(lower, "warc"), agentId: "a" });
  await reopened.open();
  const { recoveredFiles } = reopened.stats();
  await reopened.close();
  return { urls: await archivedUrls(join(lower, "warc")), recoveredFiles };
}

async function archivedUrls(warcDir: string): Promise<Set<string>> {
  const urls = new Set<string>();
  for (const name of (await readdir(warcDir)).sort()) {
    if (warcFileCompression(name) === undefined) continue;
    for await (const record of readWarcFile(join(warcDir, name))) {
      if (record.type === "response" || record.type === "revisit")
        urls.add(record.headers.get("warc-target-uri") as string);
    }
  }
  return urls;
}

describe.skipIf(skip)("storage across a power cut", () => {
  it("WarcWriter.syncAppended makes every appended record durable, across file rotations", async () => {
    // Small files: the 40 records span several rotations, and the sync lands while one is under way.
    const writer = new WarcWriter({ dir: join(mountDir, "warc"), agentId: "a", maxFileBytes: 8_000 });
    await writer.open();
    await Promise.all(Array.from({ length: 40 }, (_, i) => writer.write(exchange(i))));
    await writer.syncAppended();
    // Appended after the sync, never synced: lost.
    await Promise.all([40, 41, 42].map((i) => writer.write(exchange(i))));
    await cut();
    await writer.close().catch(() => {});
    const { urls } = await restartedWarc();
    for (let i = 0; i < 40; i++) expect(urls.has(`http://site.test/p/${i}`), `page ${i}`).toBe(true);
    expect(urls.has("http://site.test/p/42")).toBe(false);
  });

  it("WarcWriter.syncAppended called as a rotation begins covers the file being finished", async () => {
    // Every record rotates: each write after the first finishes the previous file and opens a new one.
    const writer = new WarcWriter({ dir: join(mountDir, "warc"), agentId: "a", maxFileBytes: 1 });
    await writer.open();
    for (let i = 0; i < 5; i++) await writer.write(exchange(i));
    const next = writer.write(exchange(5));
    // Once the rotation has begun: file 4 is being synced and closed, no file is live.
    await new Promise((resolve) => setImmediate(resolve));
    await writer.syncAppended();
    await cut();
    await next.catch(() => {});
    await writer.close().catch(() => {});
    const { urls } = await restartedWarc();
    for (let i = 0; i < 5; i++) expect(urls.has(`http://site.test/p/${i}`), `page ${i}`).toBe(true);
  });

  it("a torn WARC tail (part of the unsynced bytes written back) is cut off at the next open", async () => {
    const writer = new WarcWriter({ dir: join(mountDir, "warc"), agentId: "a" });
    await writer.open();
    for (let i = 0; i < 10; i++) await writer.write(exchange(i));
    await writer.syncAppended();
    for (let i = 10; i < 30; i++) await writer.write(exchange(i));
    // Writeback saved part of what followed the sync: a random prefix, likely mid-record.
    await cut(() => 0.77);
    await writer.close().catch(() => {});
    const { urls, recoveredFiles } = await restartedWarc();
    expect(recoveredFiles).toBe(1);
    for (let i = 0; i < 10; i++) expect(urls.has(`http://site.test/p/${i}`), `page ${i}`).toBe(true);
  });

  it("a failed WARC sync is for good: recover() cannot clear it, later syncs fail though the disk syncs again", async () => {
    const writer = new WarcWriter({ dir: join(mountDir, "warc"), agentId: "a" });
    await writer.open();
    await writer.write(exchange(0));
    await (mount as UnsyncedMount).failNextSync();
    await expect(writer.syncAppended()).rejects.toMatchObject({ code: ErrorCode.StorageFailed });
    // The next fsync would succeed (Linux reports a writeback error once): it must not vouch for
    // records the failed one may have dropped.
    await expect(writer.recover()).rejects.toThrow(/restart/);
    await expect(writer.syncAppended()).rejects.toThrow(/restart/);
    await expect(writer.write(exchange(1))).rejects.toMatchObject({ code: ErrorCode.StorageFailed });
    await writer.close().catch(() => {});
  });

  it("a failed crawl-log sync is for good too", async () => {
    const log = new CrawlLog({ dir: mountDir });
    await log.open();
    log.append({
      url: "http://site.test/",
      status: 200,
      bytes: 1,
      contentType: "",
      links: 0,
      durationMs: 1,
      depth: 0,
    });
    await (mount as UnsyncedMount).failNextSync();
    await expect(log.sync()).rejects.toMatchObject({ code: ErrorCode.StorageFailed });
    await expect(log.sync()).rejects.toThrow(/restart/);
    await log.close().catch(() => {});
  });

  it("StateStore.write is durable when it resolves", async () => {
    const store = await StateStore.open(join(mountDir, "state"));
    for (let i = 0; i < 50; i++) await store.write([metaOp(`k${i}`, `v${i}`)]);
    await cut(seededRandom(7));
    await store.close().catch(() => {});
    const reopened = await StateStore.open(join(lower, "state"));
    try {
      for (let i = 0; i < 50; i++) expect(await getMeta(reopened, `k${i}`)).toBe(`v${i}`);
    } finally {
      await reopened.close();
    }
  });

  it("CrawlLog.sync makes every line so far durable; later lines are lost, and a torn one is cut", async () => {
    const log = new CrawlLog({ dir: mountDir });
    await log.open();
    const line = (i: number) => ({
      url: `http://site.test/p/${i}`,
      status: 200,
      bytes: 1,
      contentType: "",
      links: 0,
      durationMs: 1,
      depth: 0,
    });
    for (let i = 0; i < 20; i++) log.append(line(i));
    await log.sync();
    for (let i = 20; i < 40; i++) log.append(line(i));
    await log.flush();
    await cut(() => 0.9);
    await log.close().catch(() => {});
    const reopened = new CrawlLog({ dir: lower });
    await reopened.open();
    await reopened.close();
    const urls: string[] = [];
    for await (const entry of readCrawlLog(join(lower, "crawl.log"))) urls.push(entry.url);
    expect(urls.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => `http://site.test/p/${i}`));
    expect(urls.length).toBeLessThan(40);
  });
});
