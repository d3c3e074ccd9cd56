import { createHash, randomBytes } from "node:crypto";
import {
  appendFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  truncate,
  unlink,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sortCdxjLines } from "../../src/storage/cdxj.js";
import { CdxjJournal } from "../../src/storage/cdxj-journal.js";
import type { WarcExchange } from "../../src/storage/warc-exchange.js";
import { type WarcCompression, warcFileCompression } from "../../src/storage/warc-file-name.js";
import { indexWarcFile } from "../../src/storage/warc-indexer.js";
import { base32 } from "../../src/storage/warc-record.js";
import { WarcWriter } from "../../src/storage/warc-writer.js";
import { zstdAvailable } from "../../src/storage/zstd.js";
import { cdxjProblems, parseCdxj } from "../support/cdxj-check.js";

/** The CDXJ index beside each WARC file: written as records are appended, rebuilt when missing or short. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-cdxj-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function exchange(i: number, body: Uint8Array = randomBytes(200 + ((i * 997) % 3000))): WarcExchange {
  return {
    url: `http://www.Site${i % 3}.test:8080/p/${i}?z=${i}&a=1`,
    ip: "127.0.0.1",
    date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5 + (i % 50), i)),
    requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\nHost: site${i % 3}.test\r\n\r\n`,
    responseHeaderBlock:
      i % 5 === 4
        ? "HTTP/1.1 404 Not Found\r\nServer: t\r\n\r\n"
        : `HTTP/1.1 200 OK\r\ncontent-type: text/HTML; charset=utf-8\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    body,
  };
}

function sha1(bytes: Uint8Array): string {
  return `sha1:${base32(createHash("sha1").update(bytes).digest())}`;
}

async function warcFiles(): Promise<string[]> {
  return (await readdir(dir))
    .filter((name) => warcFileCompression(name) !== undefined)
    .sort()
    .map((name) => join(dir, name));
}

/** Writes `count` exchanges, every seventh a revisit of the exchange before it, and closes. */
async function crawl(writer: WarcWriter, count: number, from = 0): Promise<void> {
  await writer.open();
  const writes: Promise<unknown>[] = [];
  for (let i = from; i < from + count; i++) {
    if (i % 7 === 6) {
      const { body, truncated: _, ...revisit } = exchange(i);
      writes.push(
        writer.writeRevisit({
          ...revisit,
          payloadDigest: sha1(body),
          refersTo: { url: exchange(i - 1).url, date: new Date(0).toISOString(), recordId: "<urn:uuid:x>" },
        }),
      );
    } else {
      writes.push(writer.write(exchange(i)));
    }
  }
  await Promise.all(writes);
  await writer.close();
}

describe("the CDXJ index of each WARC file", () => {
  const variants: { compression: WarcCompression; compressInWorker: boolean }[] = [
    { compression: "gzip", compressInWorker: true },
    { compression: "gzip", compressInWorker: false },
    ...(zstdAvailable() ? [{ compression: "zstd" as const, compressInWorker: true }] : []),
  ];
  for (const { compression, compressInWorker } of variants) {
    it(`holds every response and revisit at its offset and length, sorted, across rotations (${compression}, compressInWorker: ${compressInWorker})`, async () => {
      const writer = new WarcWriter({
        dir,
        agentId: "a",
        maxFileBytes: 40_000,
        compression,
        compressInWorker,
      });
      await crawl(writer, 60);
      const files = await warcFiles();
      expect(files.length).toBeGreaterThan(2);
      for (const file of files) expect(await cdxjProblems(file)).toEqual([]);
      const lines = (await Promise.all(files.map((file) => readFile(`${file}.cdxj`, "utf8")))).flatMap(
        parseCdxj,
      );
      expect(lines).toHaveLength(60);
      expect(lines.filter((line) => line.fields.mime === "warc/revisit")).toHaveLength(8);
      expect(writer.stats().reindexedFiles).toBe(0);
    });
  }

  it("writes pywb's line format: SURT key, timestamp, the JSON of cdxj-indexer", async () => {
    const writer = new WarcWriter({ dir, agentId: "a" });
    await writer.open();
    const body = Buffer.from("<p>caf\u00e9</p>");
    await writer.write({ ...exchange(0, body), url: "http://www.Site0.test:8080/caf%C3%A9?z=1&a=2" });
    await writer.close();
    const [file] = await warcFiles();
    const text = await readFile(`${file}.cdxj`, "utf8");
    const { offset, length } = parseCdxj(text)[0]?.fields ?? {};
    expect(text).toBe(
      `test,site0:8080)/caf%c3%a9?a=2&z=1 20240102030405 {"url": "http://www.Site0.test:8080/caf%C3%A9?z=1&a=2", ` +
        `"mime": "text/HTML", "status": "200", "digest": "${sha1(body).slice(5)}", "length": "${length}", ` +
        `"offset": "${offset}", "filename": "${(file as string).slice(dir.length + 1)}"}\n`,
    );
  });

  it("is the same whether written as records are appended or rebuilt from the WARC file", async () => {
    await crawl(new WarcWriter({ dir, agentId: "a", maxFileBytes: 30_000 }), 40);
    for (const file of await warcFiles()) {
      const written = await readFile(`${file}.cdxj`, "utf8");
      await unlink(`${file}.cdxj`);
      await indexWarcFile(file);
      expect(await readFile(`${file}.cdxj`, "utf8")).toBe(written);
    }
  });

  it("is written again at open when missing or torn, and for a recovered .open file", async () => {
    await crawl(new WarcWriter({ dir, agentId: "a", maxFileBytes: 30_000 }), 40);
    const [first, second, third] = await warcFiles();
    const before = await readFile(`${second}.cdxj`, "utf8");
    // A torn tail, an index cut at a line's end, none at all, and a live file left by a crash.
    await truncate(`${first}.cdxj`, 100);
    await truncate(`${second}.cdxj`, before.lastIndexOf("\n", before.length - 2) + 1);
    await unlink(`${third}.cdxj`);
    const last = (await warcFiles()).at(-1) as string;
    await unlink(`${last}.cdxj`);
    await rename(last, `${last}.open`);
    await appendFile(`${last}.open`, randomBytes(700));
    await appendFile(`${second}.cdxj.open`, "journal of a live file\n");

    const reopened = new WarcWriter({ dir, agentId: "a", maxFileBytes: 30_000 });
    await crawl(reopened, 5, 100);
    expect(reopened.stats()).toMatchObject({ recoveredFiles: 1, reindexedFiles: 4 });
    expect(await readFile(`${second}.cdxj`, "utf8")).toBe(before);
    for (const file of await warcFiles()) expect(await cdxjProblems(file)).toEqual([]);
    expect((await readdir(dir)).filter((name) => /\.cdxj\.(open|tmp)$/.test(name))).toEqual([]);
  });

  it("leaves another agent's files and indexes alone", async () => {
    await crawl(new WarcWriter({ dir, agentId: "other" }), 3);
    const [theirs] = await warcFiles();
    await unlink(`${theirs}.cdxj`);
    await crawl(new WarcWriter({ dir, agentId: "a" }), 3);
    expect((await readdir(dir)).filter((name) => name.includes("-other."))).toEqual([
      (theirs as string).slice(dir.length + 1),
    ]);
  });
});

describe("CdxjJournal", () => {
  it("spills lines to <file>.cdxj.open past its memory bound and sorts them all into the index", async () => {
    const warc = join(dir, "x-20240102030405-00001-a.warc.gz");
    const journal = new CdxjJournal(warc, { spillBytes: 100 });
    const lines = Array.from({ length: 50 }, (_, i) => `k${(i * 37) % 50} 20240102030405 {"n": "${i}"}\n`);
    for (const line of lines) journal.add(line);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await readdir(dir)).toContain("x-20240102030405-00001-a.warc.gz.cdxj.open");
    await journal.finish();
    expect(await readFile(`${warc}.cdxj`, "utf8")).toBe([...lines].sort().join(""));
    expect(await readdir(dir)).toEqual(["x-20240102030405-00001-a.warc.gz.cdxj"]);
  });

  it.each([2_000, 150_000])(
    "merges its sorted runs (spilled past %i bytes) into the index as a sort of all lines would, repeats dropped",
    async (spillBytes) => {
      const warc = join(dir, "y-20240102030405-00001-a.warc.gz");
      const journal = new CdxjJournal(warc, { spillBytes });
      // Multi-byte characters cross the merge's 64 KiB reads; some lines come twice, in other runs.
      const words = ["é", "日本", "a", "zz", "ß", "𝄞", "m"];
      const lines = Array.from({ length: 6_000 }, (_, i) => {
        const n = (i * 7_919) % 4_000;
        return `${words[n % words.length]}${n},org)/${"x".repeat(n % 90)} 2024010203${String(n % 9_999).padStart(4, "0")} {"n": "${n}"}\n`;
      });
      for (const line of lines) journal.add(line);
      await journal.finish();
      expect(await readFile(`${warc}.cdxj`, "utf8")).toBe(sortCdxjLines([...lines]).join(""));
      expect(await readdir(dir)).toEqual(["y-20240102030405-00001-a.warc.gz.cdxj"]);
    },
  );

  it("indexes the WARC file itself when its spill file could not be written", async () => {
    await crawl(new WarcWriter({ dir, agentId: "a" }), 10);
    const [file] = await warcFiles();
    const written = await readFile(`${file}.cdxj`, "utf8");
    await unlink(`${file}.cdxj`);
    // The spill file's place is taken by a folder: opening it fails.
    await mkdir(`${file}.cdxj.open`);
    const journal = new CdxjJournal(file as string, { spillBytes: 1 });
    journal.add("a line that cannot be spilled\n");
    await journal.finish();
    expect(await readFile(`${file}.cdxj`, "utf8")).toBe(written);
  });
});
