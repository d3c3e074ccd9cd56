import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rename, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import type { WarcExchange } from "../../src/storage/warc-exchange.js";
import { warcFileCompression } from "../../src/storage/warc-file-name.js";
import { readWarcFile, splitHttpBlock, type WarcRecordRead } from "../../src/storage/warc-reader.js";
import { recoverWarcFile } from "../../src/storage/warc-recovery.js";
import { WarcWriter } from "../../src/storage/warc-writer.js";
import { zstdAvailable, zstdCompress, zstdDecompress } from "../../src/storage/zstd.js";
import { buildZstdDictionary, dictionaryFrame } from "../../src/storage/zstd-dictionary.js";
import { skipWithout } from "../support/tools.js";
import { cliDictionary, cliRecords, noZstdCli, ZSTD_CLI, zstd } from "../support/zstd-cli.js";

/**
 * `.warc.zst` files (the IIPC WARC Zstandard profile) checked by an independent reader: Debian's
 * `zstd` command (libzstd's own reference tool) loads the dictionaries and decompresses the files,
 * and warcio reads the WARC records out of what it gives.
 */

const noZlib = zstdAvailable()
  ? undefined
  : `node:zlib has no zstd with dictionaries on ${process.version} (22.19+, 24.6+)`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-warc-zstd-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A page like the test web's: a shared template around text and links of its own. */
function page(i: number): Buffer {
  const links = Array.from(
    { length: 20 },
    (_, k) => `<li><a href="/s${k}/a${(i * 7 + k) % 97}.html">article ${k}</a></li>`,
  );
  return Buffer.from(
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Page ${i}</title></head>\n` +
      `<body><nav><ul>${links.join("\n")}</ul></nav>\n<p>${"lorem ipsum dolor sit amet ".repeat(20 + (i % 7))}</p>\n` +
      `<p>${randomBytes(64).toString("base64")}</p></body></html>\n`,
  );
}

function exchange(i: number, body: Uint8Array = page(i)): WarcExchange {
  return {
    url: `http://site${i % 3}.test/p/${i}`,
    ip: "127.0.0.1",
    date: new Date(Date.UTC(2026, 10, 27, 3, 4, 5, i)),
    requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\nHost: site${i % 3}.test\r\nUser-Agent: ubicrawl-test\r\n\r\n`,
    responseHeaderBlock: `HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    body,
  };
}

/** What `zstd -lv` says of each frame of `path`. */
function zstdList(path: string): string {
  return execFileSync(ZSTD_CLI, ["-lv", path], { encoding: "utf8" });
}

async function ourRecords(path: string): Promise<WarcRecordRead[]> {
  const records: WarcRecordRead[] = [];
  for await (const record of readWarcFile(path)) records.push(record);
  return records;
}

async function zstFiles(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith(".warc.zst")).sort();
}

// Compressed by Node's libzstd with the dictionary, decompressed by the zstd command's. (libzstd before
// 1.5.5, Debian 12's 1.5.4 among them, will not compress with a dictionary whose literal table leaves
// bytes out, as these do; every version reads what they compressed.)
describe.skipIf(noZlib !== undefined || skipWithout(noZstdCli))(
  `Zstandard dictionaries${noZlib ? ` (skipped: ${noZlib})` : ""}`,
  () => {
    it("are loaded by libzstd and by the zstd command, and round-trip data, whatever the samples", async () => {
      const sampleSets: Buffer[][] = [
        [page(1), page(2), page(3)],
        [randomBytes(20_000)],
        [Buffer.alloc(5000, 0x61)],
        [Buffer.from("12345678")],
        [Buffer.from("\u00e9\u00e8\u4e2d\u6587".repeat(400), "utf8")],
      ];
      for (const [n, samples] of sampleSets.entries()) {
        const dictionary = buildZstdDictionary(samples, 16 * 1024);
        expect(dictionary.bytes.readUInt32LE(0)).toBe(0xec30a437);
        expect(dictionary.bytes.readUInt32LE(4)).toBe(dictionary.id);
        expect(dictionary.id).toBeGreaterThanOrEqual(32_768);
        const dictionaryPath = join(dir, `dict-${n}`);
        await writeFile(dictionaryPath, dictionary.bytes);
        const data = Buffer.concat([page(n + 10), randomBytes(300), page(n + 11)]);
        const compressed = zstdCompress(data, 3, dictionary.bytes);
        // The frame names the dictionary by its id, as the WARC profile requires.
        await writeFile(`${dictionaryPath}.zst`, compressed);
        expect(zstdList(`${dictionaryPath}.zst`)).toContain(`DictID: ${dictionary.id}`);
        expect(zstd(["-d", "-c", "-D", dictionaryPath], compressed).equals(data)).toBe(true);
        expect(zstdDecompress(compressed, dictionary.bytes).equals(data)).toBe(true);
      }
    });

    it("make page-like records smaller than without one", () => {
      const dictionary = buildZstdDictionary([page(1), page(2), page(3), page(4)], 16 * 1024);
      const record = page(5);
      expect(zstdCompress(record, 3, dictionary.bytes).length).toBeLessThan(
        zstdCompress(record, 3).length * 0.8,
      );
    });
  },
);

describe.skipIf(noZlib !== undefined || skipWithout(noZstdCli))(
  `WarcWriter with zstd${noZlib ? ` (skipped: ${noZlib})` : ""}`,
  () => {
    it.each([true, false])(
      "writes .warc.zst files, each with its dictionary first, that the zstd command and warcio read back (compressInWorker: %s)",
      async (compressInWorker) => {
        const writer = new WarcWriter({
          dir,
          agentId: "agent-7",
          compression: "zstd",
          maxFileBytes: 6_000,
          compressInWorker,
        });
        await writer.open();
        const count = 40;
        for (let i = 0; i < count; i++) await writer.write(exchange(i));
        await writer.close();
        const files = await zstFiles();
        expect(files.length).toBeGreaterThan(2);
        expect(files.every((name) => /^ubicrawl-\d{14}-\d{5}-agent-7\.warc\.zst$/.test(name))).toBe(true);
        const ids = new Set<number>();
        const urls: string[] = [];
        for (const name of files) {
          const path = join(dir, name);
          const bytes = await readFile(path);
          const dictionary = cliDictionary(bytes);
          ids.add(dictionary.readUInt32LE(4));
          // Every frame names that dictionary and carries a checksum (zstd -lv lists them).
          const listing = zstdList(path);
          expect(listing).toContain(`DictID: ${dictionary.readUInt32LE(4)}`);
          expect(listing).toContain("Check: XXH64");
          // Every frame states its content size (the profile requires Frame_Content_Size).
          expect(listing).toMatch(/Decompressed Size: \d/);
          const records = await cliRecords(path);
          expect(records[0]?.type).toBe("warcinfo");
          expect(records[0]?.headers.get("warc-filename")).toBe(name);
          for (const record of records.filter((r) => r.type === "response")) {
            const url = record.headers.get("warc-target-uri") as string;
            urls.push(url);
            const i = Number(url.split("/p/")[1]);
            expect(splitHttpBlock(record.block).payload.length).toBe(exchange(i).body.byteLength);
          }
          // Our own reader gives the same records.
          const ours = await ourRecords(path);
          expect(ours.map((r) => r.headers.get("warc-record-id"))).toEqual(
            records.map((r) => r.headers.get("warc-record-id")),
          );
          expect(ours[0]?.offset).toBe(8 + bytes.readUInt32LE(4));
        }
        expect(urls).toEqual(Array.from({ length: count }, (_, i) => exchange(i).url));
        // A dictionary of its own per file; after the first, made of the exchanges just written.
        expect(ids.size).toBe(files.length);
        const second = cliDictionary(await readFile(join(dir, files[1] as string))).toString("latin1");
        expect(second).toMatch(/WARC-Target-URI: http:\/\/site\d\.test\/p\/\d+/);
        expect(writer.stats().bytes).toBe(
          (await Promise.all(files.map((f) => stat(join(dir, f))))).reduce((sum, s) => sum + s.size, 0),
        );
      },
    );

    it("writes smaller files than gzip for the same pages", async () => {
      const sizes: Record<string, number> = {};
      for (const compression of ["gzip", "zstd"] as const) {
        const sub = join(dir, compression);
        const writer = new WarcWriter({ dir: sub, agentId: "a", compression });
        await writer.open();
        for (let i = 0; i < 60; i++) await writer.write(exchange(i));
        await writer.close();
        sizes[compression] = writer.stats().bytes;
      }
      expect(sizes.zstd).toBeLessThan((sizes.gzip as number) * 0.9);
    });

    it("writes files without a dictionary when dictionaryBytes is 0", async () => {
      const writer = new WarcWriter({ dir, agentId: "a", compression: "zstd", dictionaryBytes: 0 });
      await writer.open();
      for (let i = 0; i < 5; i++) await writer.write(exchange(i));
      await writer.close();
      const [name] = await zstFiles();
      const path = join(dir, name as string);
      expect((await readFile(path)).readUInt32LE(0)).toBe(0xfd2fb528);
      const plain = zstd(["-d", "-c", path]).toString("latin1");
      expect(plain.startsWith("WARC/1.1\r\nWARC-Type: warcinfo\r\n")).toBe(true);
      expect((await ourRecords(path)).filter((r) => r.type === "response")).toHaveLength(5);
    });

    it("recovers a torn .warc.zst.open file to its whole records, request and response pairs", async () => {
      const writer = new WarcWriter({ dir, agentId: "a", compression: "zstd" });
      await writer.open();
      for (let i = 0; i < 10; i++) await writer.write(exchange(i));
      await writer.close();
      const [name] = await zstFiles();
      const path = join(dir, name as string);
      const whole = await readFile(path);
      const dictionaryFrameBytes = 8 + whole.readUInt32LE(4);
      for (const cut of [whole.length - 3, Math.floor(whole.length * 0.6), Math.floor(whole.length * 0.3)]) {
        await writeFile(`${path}.open`, whole.subarray(0, cut));
        const result = await recoverWarcFile(`${path}.open`);
        expect(result.path).toBe(path);
        expect(result.keptBytes + result.droppedBytes).toBe(cut);
        const records = await cliRecords(path);
        expect(records[0]?.type).toBe("warcinfo");
        const types = records.slice(1).map((r) => r.type);
        // Pairs only: a request whose response was torn is cut with it.
        expect(types.length % 2).toBe(0);
        for (let k = 0; k < types.length; k += 2)
          expect(types.slice(k, k + 2)).toEqual(["request", "response"]);
        expect(result.records).toBe(records.length);
      }
      // A tear inside the dictionary frame, or just after it, leaves no whole record: the file goes.
      await rm(path);
      for (const cut of [20, dictionaryFrameBytes + 10]) {
        await writeFile(`${path}.open`, whole.subarray(0, cut));
        const result = await recoverWarcFile(`${path}.open`);
        expect(result).toMatchObject({ path: undefined, records: 0, keptBytes: 0, droppedBytes: cut });
        // (The index the finished file had before the test made it `.open` again stays.)
        expect((await readdir(dir)).filter((name) => warcFileCompression(name) !== undefined)).toEqual([]);
      }
    });

    it("recovery leaves a file alone, and says so, when its first record does not read with its dictionary", async () => {
      const writer = new WarcWriter({ dir, agentId: "a", compression: "zstd", compressInWorker: false });
      await writer.open();
      for (let i = 0; i < 3; i++) await writer.write(exchange(i));
      await writer.close();
      const [name] = await zstFiles();
      const path = join(dir, name as string);
      const bytes = await readFile(path);
      const frameEnd = 8 + bytes.readUInt32LE(4);
      // Another dictionary in its place: every frame names one the file does not have.
      const other = dictionaryFrame(buildZstdDictionary([page(99)], 4096));
      const swapped = Buffer.concat([other, bytes.subarray(frameEnd)]);
      await writeFile(`${path}.open`, swapped);
      await rm(path);
      const error = await recoverWarcFile(`${path}.open`).catch((e: unknown) => e);
      expect(isUbiError(error, ErrorCode.StorageFailed)).toBe(true);
      expect(String((error as Error).message)).toContain("does not decompress with its dictionary");
      expect((await readFile(`${path}.open`)).equals(swapped)).toBe(true);
    });

    it("recovery cuts a frame whose bytes were damaged (its checksum fails)", async () => {
      const writer = new WarcWriter({ dir, agentId: "a", compression: "zstd", compressInWorker: false });
      await writer.open();
      for (let i = 0; i < 4; i++) await writer.write(exchange(i));
      await writer.close();
      const [name] = await zstFiles();
      const path = join(dir, name as string);
      const bytes = await readFile(path);
      // Flip a byte near the end: inside the last response's frame.
      bytes[bytes.length - 30] = (bytes[bytes.length - 30] as number) ^ 0xff;
      await writeFile(`${path}.open`, bytes);
      await rm(path);
      const result = await recoverWarcFile(`${path}.open`);
      expect(result.records).toBe(1 + 3 * 2);
      expect((await cliRecords(path)).filter((r) => r.type === "response")).toHaveLength(3);
    });

    it("a leftover .warc.zst.open file is repaired when the writer opens, and the serial goes on", async () => {
      const first = new WarcWriter({ dir, agentId: "a", compression: "zstd" });
      await first.open();
      for (let i = 0; i < 3; i++) await first.write(exchange(i));
      await first.close();
      const [name] = await zstFiles();
      await rename(join(dir, name as string), join(dir, `${name}.open`));
      await truncate(join(dir, `${name}.open`), (await stat(join(dir, `${name}.open`))).size - 5);
      const second = new WarcWriter({ dir, agentId: "a" });
      await second.open();
      await second.write(exchange(9));
      await second.close();
      expect(second.stats().recoveredFiles).toBe(1);
      const names = (await readdir(dir)).filter((name) => warcFileCompression(name) !== undefined).sort();
      expect(names.map((n) => n.split("-")[2])).toEqual(["00001", "00002"]);
      expect(names[1]?.endsWith(".warc.gz")).toBe(true);
    });
  },
);

describe.skipIf(noZlib === undefined)(`WarcWriter with zstd on ${process.version}`, () => {
  it("refuses zstd, naming the Node.js release it needs", () => {
    let error: unknown;
    try {
      new WarcWriter({ dir, agentId: "a", compression: "zstd" });
    } catch (caught) {
      error = caught;
    }
    expect(isUbiError(error) && error.code).toBe(ErrorCode.InvalidArgument);
    expect(String((error as Error).message)).toContain("needs Node.js 22.19 (24.6 on the 24 line) or later");
  });
});
