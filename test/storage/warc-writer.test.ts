import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/clock.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import type { WarcExchange } from "../../src/storage/warc-exchange.js";
import { warcFileCompression } from "../../src/storage/warc-file-name.js";
import { readWarcFile, splitHttpBlock, type WarcRecordRead } from "../../src/storage/warc-reader.js";
import { base32 } from "../../src/storage/warc-record.js";
import { WarcWriter } from "../../src/storage/warc-writer.js";

const FILE_NAME = /^ubicrawl-\d{14}-\d{5}-agent-7\.warc\.gz$/;
const RECORD_ID = /^<urn:uuid:[0-9a-f-]{36}>$/;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-warc-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function exchange(i: number, body: Uint8Array = Buffer.from(`<html><a href="/p/${i + 1}">next</a></html>`)) {
  return {
    url: `http://site${i % 3}.test/p/${i}?q=${i}`,
    ip: "127.0.0.1",
    date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, i)),
    requestHeaderBlock: `GET /p/${i}?q=${i} HTTP/1.1\r\nHost: site${i % 3}.test\r\nUser-Agent: ubicrawl-test\r\n\r\n`,
    responseHeaderBlock: `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    body,
  } satisfies WarcExchange;
}

function sha1(...chunks: Uint8Array[]): string {
  const hash = createHash("sha1");
  for (const chunk of chunks) hash.update(chunk);
  return `sha1:${base32(hash.digest())}`;
}

async function readAll(path: string): Promise<WarcRecordRead[]> {
  const records: WarcRecordRead[] = [];
  for await (const record of readWarcFile(path)) records.push(record);
  return records;
}

/**
 * The target URIs of the response records of `files`, in order, after checking that each file starts
 * with its own warcinfo record and that every other record points to it.
 */
async function responseUrlsOf(files: readonly string[]): Promise<string[]> {
  const urls: string[] = [];
  for (const file of files) {
    const records = await readAll(join(dir, file));
    const info = records[0] as WarcRecordRead;
    expect(info.type).toBe("warcinfo");
    expect(info.headers.get("warc-filename")).toBe(file);
    for (const record of records.slice(1)) {
      expect(record.headers.get("warc-warcinfo-id")).toBe(info.headers.get("warc-record-id"));
      if (record.type === "response") urls.push(record.headers.get("warc-target-uri") as string);
    }
  }
  return urls;
}

/** The WARC files in the folder (not their indexes). */
async function warcFiles(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => warcFileCompression(name) !== undefined).sort();
}

async function expectRejectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isUbiError(error)).toBe(true);
  expect((error as { code: string }).code).toBe(code);
}

describe("base32", () => {
  it("matches the RFC 4648 test vectors", () => {
    const cases: [string, string][] = [
      ["", ""],
      ["f", "MY======"],
      ["fo", "MZXQ===="],
      ["foo", "MZXW6==="],
      ["foob", "MZXW6YQ="],
      ["fooba", "MZXW6YTB"],
      ["foobar", "MZXW6YTBOI======"],
    ];
    for (const [input, output] of cases) expect(base32(Buffer.from(input))).toBe(output);
  });
});

describe("WarcWriter", () => {
  it.each([true, false])(
    "writes request/response pairs that read back with matching headers, digests and bodies (compressInWorker: %s)",
    async (compressInWorker) => {
      const clock: Clock = { ...systemClock, now: () => Date.UTC(2024, 4, 6, 7, 8, 9) };
      const writer = new WarcWriter(
        { dir, agentId: "agent-7", software: "ubicrawl/test", compressInWorker },
        { clock },
      );
      await writer.open();
      const sent = Array.from({ length: 25 }, (_, i) =>
        exchange(i, i === 3 ? randomBytes(70_000) : undefined),
      );
      const truncated = { ...exchange(99), truncated: true };
      for (const ex of sent) await writer.write(ex);
      await writer.write(truncated);
      await writer.close();

      const files = await warcFiles();
      expect(files).toEqual(["ubicrawl-20240506070809-00001-agent-7.warc.gz"]);
      const records = await readAll(join(dir, files[0] as string));
      expect(records).toHaveLength(1 + 2 * 26);
      const info = records[0] as WarcRecordRead;
      expect(info.type).toBe("warcinfo");
      expect(info.headers.get("warc-filename")).toBe(files[0]);
      expect(info.headers.get("content-type")).toBe("application/warc-fields");
      expect(Buffer.from(info.block).toString()).toContain("software: ubicrawl/test\r\n");
      const warcinfoId = info.headers.get("warc-record-id");
      expect(warcinfoId).toMatch(RECORD_ID);

      const ids = new Set<string>();
      [...sent, truncated].forEach((ex, i) => {
        const request = records[1 + 2 * i] as WarcRecordRead;
        const response = records[2 + 2 * i] as WarcRecordRead;
        expect(request.type).toBe("request");
        expect(response.type).toBe("response");
        for (const record of [request, response]) {
          expect(record.headers.get("warc-target-uri")).toBe(ex.url);
          expect(record.headers.get("warc-ip-address")).toBe("127.0.0.1");
          expect(record.headers.get("warc-date")).toBe(ex.date.toISOString());
          expect(record.headers.get("warc-warcinfo-id")).toBe(warcinfoId);
          expect(record.headers.get("warc-record-id")).toMatch(RECORD_ID);
          expect(Number(record.headers.get("content-length"))).toBe(record.block.byteLength);
          expect(record.headers.get("warc-block-digest")).toBe(sha1(record.block));
          ids.add(record.headers.get("warc-record-id") as string);
        }
        expect(request.headers.get("content-type")).toBe("application/http;msgtype=request");
        expect(response.headers.get("content-type")).toBe("application/http;msgtype=response");
        expect(Buffer.from(request.block).toString("latin1")).toBe(ex.requestHeaderBlock);
        const { headerBlock, payload } = splitHttpBlock(response.block);
        expect(headerBlock).toBe(ex.responseHeaderBlock);
        expect(Buffer.from(payload).equals(Buffer.from(ex.body))).toBe(true);
        expect(response.headers.get("warc-payload-digest")).toBe(sha1(ex.body));
        expect(request.headers.get("warc-payload-digest")).toBe(sha1());
        expect(response.headers.get("warc-truncated")).toBe(ex === truncated ? "length" : undefined);
      });
      expect(ids.size).toBe(2 * 26);
      expect(writer.stats()).toMatchObject({ records: 53, exchanges: 26, files: 1, recoveredFiles: 0 });
      expect(writer.stats().bytes).toBe((await stat(join(dir, files[0] as string))).size);
    },
  );

  it.each([true, false])(
    "writes a payload digest computed before as given, in the record and its index line (compressInWorker: %s)",
    async (compressInWorker) => {
      const writer = new WarcWriter({ dir, agentId: "agent-7", compressInWorker });
      await writer.open();
      const lines: string[] = [];
      writer.observeIndexed((line) => lines.push(line));
      const given = Array.from({ length: 6 }, (_, i) => exchange(i));
      // Taken as given, not digested again: a well-formed digest that is not the body's shows it.
      const stand = `sha1:${"A".repeat(32)}`;
      const digests = given.map((ex, i) => (i === 5 ? stand : i % 2 === 0 ? sha1(ex.body) : undefined));
      for (const [i, ex] of given.entries()) {
        const digest = digests[i];
        await writer.write(digest === undefined ? ex : { ...ex, payloadDigest: digest });
      }
      await expect(writer.write({ ...exchange(9), payloadDigest: "sha1:short\r\nX: y" })).rejects.toThrow(
        /sha1/,
      );
      await writer.close();

      const records = (await readAll(join(dir, (await warcFiles())[0] as string))).slice(1);
      expect(records).toHaveLength(2 * given.length);
      given.forEach((ex, i) => {
        const response = records[2 * i + 1] as WarcRecordRead;
        expect(response.headers.get("warc-payload-digest")).toBe(digests[i] ?? sha1(ex.body));
        expect(response.headers.get("warc-block-digest")).toBe(sha1(response.block));
        expect(Number(response.headers.get("content-length"))).toBe(response.block.byteLength);
      });
      expect(lines.map((line) => JSON.parse(line.slice(line.indexOf("{"))).digest)).toEqual(
        given.map((ex, i) => (digests[i] ?? sha1(ex.body)).slice("sha1:".length)),
      );
    },
  );

  it("links each request and response with WARC-Concurrent-To", async () => {
    const writer = new WarcWriter({ dir, agentId: "agent-7" });
    await writer.open();
    for (let i = 0; i < 5; i++) await writer.write(exchange(i));
    await writer.close();
    const records = (await readAll(join(dir, (await warcFiles())[0] as string))).slice(1);
    for (let i = 0; i < records.length; i += 2) {
      const request = records[i] as WarcRecordRead;
      const response = records[i + 1] as WarcRecordRead;
      expect(request.headers.get("warc-concurrent-to")).toBe(response.headers.get("warc-record-id"));
      expect(response.headers.get("warc-concurrent-to")).toBe(request.headers.get("warc-record-id"));
    }
  });

  it.each([true, false])(
    "keeps call order and whole records when many writes are in flight at once (compressInWorker: %s)",
    async (compressInWorker) => {
      const writer = new WarcWriter({ dir, agentId: "agent-7", compressInWorker });
      await writer.open();
      const sent = Array.from({ length: 200 }, (_, i) =>
        exchange(i, randomBytes(1000 + ((i * 997) % 20_000))),
      );
      await Promise.all(sent.map((ex) => writer.write(ex)));
      await writer.close();
      const records = (await readAll(join(dir, (await warcFiles())[0] as string))).slice(1);
      expect(records).toHaveLength(400);
      sent.forEach((ex, i) => {
        const response = records[2 * i + 1] as WarcRecordRead;
        expect(response.headers.get("warc-target-uri")).toBe(ex.url);
        expect(Buffer.from(splitHttpBlock(response.block).payload).equals(Buffer.from(ex.body))).toBe(true);
      });
      expect(writer.stats()).toMatchObject({ records: 401, exchanges: 200, files: 1 });
    },
  );

  it("rotates to a new file, each starting with its own warcinfo, once maxFileBytes is reached", async () => {
    const maxFileBytes = 20_000;
    const writer = new WarcWriter({ dir, agentId: "agent-7", maxFileBytes });
    await writer.open();
    // Random bodies do not compress, so each exchange adds ~6 KB.
    for (let i = 0; i < 20; i++) await writer.write(exchange(i, randomBytes(6000)));
    await writer.close();
    const files = await warcFiles();
    expect(files.length).toBeGreaterThanOrEqual(5);
    expect(files.every((f) => FILE_NAME.test(f))).toBe(true);
    expect(files.map((f) => f.split("-")[2])).toEqual(files.map((_, i) => String(i + 1).padStart(5, "0")));
    for (const [index, file] of files.entries()) {
      const size = (await stat(join(dir, file))).size;
      if (index < files.length - 1) expect(size).toBeGreaterThanOrEqual(maxFileBytes);
      expect(size).toBeLessThan(maxFileBytes + 7000);
    }
    const urls = await responseUrlsOf(files);
    expect(urls).toEqual(Array.from({ length: 20 }, (_, i) => exchange(i).url));
    expect(writer.stats().files).toBe(files.length);
  });

  it.each([true, false])(
    "rotates with writes in flight: each file starts with its warcinfo, records in call order (compressInWorker: %s)",
    async (compressInWorker) => {
      const writer = new WarcWriter({ dir, agentId: "agent-7", maxFileBytes: 20_000, compressInWorker });
      await writer.open();
      const sent = Array.from({ length: 40 }, (_, i) => exchange(i, randomBytes(3000)));
      await Promise.all(sent.map((ex) => writer.write(ex)));
      await writer.close();
      const files = await warcFiles();
      expect(files.length).toBeGreaterThanOrEqual(4);
      expect(await responseUrlsOf(files)).toEqual(sent.map((ex) => ex.url));
      expect(writer.stats()).toMatchObject({ exchanges: 40, files: files.length });
    },
  );

  it("names finished files .warc.gz and the live one .warc.gz.open", async () => {
    const writer = new WarcWriter({ dir, agentId: "agent-7" });
    await writer.open();
    expect(await warcFiles()).toEqual([]);
    await writer.write(exchange(1));
    await writer.flush();
    const live = await warcFiles();
    expect(live).toHaveLength(1);
    expect(live[0]).toMatch(/\.warc\.gz\.open$/);
    await writer.close();
    await writer.close();
    expect(await warcFiles()).toEqual([(live[0] as string).replace(/\.open$/, "")]);
  });

  it("continues the serial after files from an earlier run", async () => {
    const first = new WarcWriter({ dir, agentId: "agent-7" });
    await first.open();
    await first.write(exchange(1));
    await first.close();
    const second = new WarcWriter({ dir, agentId: "agent-7" });
    await second.open();
    await second.write(exchange(2));
    await second.close();
    expect((await warcFiles()).map((f) => f.split("-")[2])).toEqual(["00001", "00002"]);
  });

  it("produces files that the system gzip accepts", async (context) => {
    const gzipOk = await promisify(execFile)("gzip", ["--version"]).then(
      () => true,
      () => false,
    );
    if (!gzipOk) context.skip();
    const writer = new WarcWriter({ dir, agentId: "agent-7", maxFileBytes: 30_000 });
    await writer.open();
    for (let i = 0; i < 12; i++) await writer.write(exchange(i, randomBytes(5000)));
    await writer.close();
    const files = await warcFiles();
    expect(files.length).toBeGreaterThan(1);
    for (const file of files) {
      await promisify(execFile)("gzip", ["-t", join(dir, file)]);
      const { stdout } = await promisify(execFile)("gzip", ["-dc", join(dir, file)], {
        encoding: "latin1",
        maxBuffer: 1 << 24,
      });
      expect(stdout.startsWith("WARC/1.1\r\nWARC-Type: warcinfo\r\n")).toBe(true);
    }
  });

  it("rejects bad options, writes when not open, and line breaks in fields", async () => {
    const bad = [
      { dir: "", agentId: "a" },
      { dir, agentId: "a/b" },
      { dir, agentId: "" },
      { dir, agentId: "a", maxFileBytes: 0 },
      { dir, agentId: "a", level: 10 },
      { dir, agentId: "a", compression: "brotli" as "gzip" },
      { dir, agentId: "a", dictionaryBytes: -1 },
      { dir, agentId: "a", dictionaryBytes: 100 },
      { dir, agentId: "a", compressInWorker: "yes" as unknown as boolean },
      { dir, agentId: "a", filePrefix: "x y" },
    ];
    for (const options of bad)
      expect(() => new WarcWriter(options)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    const writer = new WarcWriter({ dir, agentId: "agent-7" });
    await expectRejectCode(writer.write(exchange(1)), ErrorCode.StorageFailed);
    await writer.open();
    await expectRejectCode(
      writer.write({ ...exchange(1), url: "http://x.test/\r\nWARC-Type: evil" }),
      ErrorCode.InvalidArgument,
    );
    await expectRejectCode(
      writer.write({ ...exchange(1), date: new Date(Number.NaN) }),
      ErrorCode.InvalidArgument,
    );
    await writer.write(exchange(2));
    await writer.close();
    await expectRejectCode(writer.write(exchange(3)), ErrorCode.StorageFailed);
    expect((await readAll(join(dir, (await warcFiles())[0] as string))).map((r) => r.type)).toEqual([
      "warcinfo",
      "request",
      "response",
    ]);
  });
});

describe("WarcWriter revisit records", () => {
  it("writes a request and an identical-payload-digest revisit that warcio reads and resolves to the original", async () => {
    const writer = new WarcWriter({ dir, agentId: "agent-7", compressInWorker: false });
    await writer.open();
    const body = Buffer.from("<html>the same bytes under two URLs</html>");
    const first = exchange(0, body);
    const recordId = await writer.write(first);
    expect(recordId).toMatch(RECORD_ID);
    const second = { ...exchange(1, body), url: "http://mirror.test/p/0?sessionid=42" };
    await writer.writeRevisit({
      url: second.url,
      ip: second.ip,
      date: second.date,
      requestHeaderBlock: second.requestHeaderBlock,
      responseHeaderBlock: second.responseHeaderBlock,
      payloadDigest: sha1(body),
      refersTo: { url: first.url, date: first.date.toISOString(), recordId },
    });
    await writer.close();
    expect(writer.stats()).toMatchObject({ exchanges: 2, revisits: 1, records: 5 });

    const [file] = await warcFiles();
    const records: WarcRecordRead[] = [];
    for await (const record of readWarcFile(join(dir, file as string))) records.push(record);
    expect(records.map((r) => r.type)).toEqual(["warcinfo", "request", "response", "request", "revisit"]);
    const response = records[2] as WarcRecordRead;
    const revisit = records[4] as WarcRecordRead;
    // Resolved as a replay tool does: the revisit's target and date name the original response, whose
    // payload digest is the revisit's.
    const byTarget = records.filter(
      (r) =>
        r.type === "response" &&
        r.headers.get("warc-target-uri") === revisit.headers.get("warc-refers-to-target-uri") &&
        r.headers.get("warc-date") === revisit.headers.get("warc-refers-to-date"),
    );
    expect(byTarget).toEqual([response]);
    expect(revisit.headers.get("warc-refers-to")).toBe(response.headers.get("warc-record-id"));
    expect(revisit.headers.get("warc-payload-digest")).toBe(response.headers.get("warc-payload-digest"));
    expect(revisit.headers.get("warc-profile")).toBe(
      "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
    );
    expect(revisit.headers.get("warc-concurrent-to")).toBe(records[3]?.headers.get("warc-record-id"));
    // The block is the response's header block alone, and its digest is right.
    expect(Buffer.from(revisit.block).toString("latin1")).toBe(second.responseHeaderBlock);
    expect(revisit.headers.get("warc-block-digest")).toBe(sha1(revisit.block));
    expect(Buffer.from(splitHttpBlock(response.block).payload).toString()).toBe(body.toString());
  });

  it("refuses a revisit whose digest or reference would break the record", async () => {
    const writer = new WarcWriter({ dir, agentId: "agent-7", compressInWorker: false });
    await writer.open();
    const base = exchange(2);
    const revisit = {
      url: base.url,
      ip: base.ip,
      date: base.date,
      requestHeaderBlock: base.requestHeaderBlock,
      responseHeaderBlock: base.responseHeaderBlock,
      payloadDigest: sha1(base.body),
      refersTo: { url: "http://a.test/", date: "2024-01-02T03:04:05.000Z", recordId: "<urn:uuid:x>" },
    };
    await expect(writer.writeRevisit({ ...revisit, payloadDigest: "md5:abc" })).rejects.toThrow(/sha1/);
    await expect(
      writer.writeRevisit({ ...revisit, refersTo: { ...revisit.refersTo, url: "http://a.test/\r\nX: y" } }),
    ).rejects.toThrow(/line break/);
    await writer.close();
  });
});
