import { createHash, randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import {
  type AppendedRecords,
  InlineAppender,
  type RecordAppender,
  WorkerAppender,
} from "../../src/storage/record-appender.js";
import type { RecordDraft } from "../../src/storage/warc-draft.js";
import { base32, exchangeDrafts, serializeWarcRecord } from "../../src/storage/warc-record.js";
import { zstdAvailable, zstdDecompress } from "../../src/storage/zstd.js";
import { buildZstdDictionary } from "../../src/storage/zstd-dictionary.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-appender-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A draft without digests: head text then the record's bytes. */
function plain(head: string, body: Uint8Array): RecordDraft {
  return { head, block: [body], payloadFrom: 1, blockDigestAt: -1, payloadDigestAt: -1 };
}

function drafts(count: number, seed: number): RecordDraft[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? plain(`head ${seed}/${i}\r\n`, randomBytes(10 + ((seed * 31 + i * 977) % 30_000)))
      : plain("", Buffer.from(`record ${seed}/${i} `.repeat(200))),
  );
}

/** What a plain draft must decompress to. */
function expected(draft: RecordDraft): Buffer {
  return Buffer.concat([Buffer.from(draft.head), draft.block[0] as Uint8Array, Buffer.from("\r\n\r\n")]);
}

function sha1(...chunks: (string | Uint8Array)[]): string {
  const hash = createHash("sha1");
  for (const chunk of chunks) hash.update(typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk);
  return `sha1:${base32(hash.digest())}`;
}

/** A file open for appending, closed after the test. */
function appendFile(name: string): { path: string; fd: number } {
  const path = join(dir, name);
  const fd = openSync(path, "a");
  onTestFinished(() => closeSync(fd));
  return { path, fd };
}

/** The file cut at the given sizes, each part decompressed (a part may hold several gzip members). */
function parts(path: string, sizes: readonly number[]): Buffer[] {
  const bytes = readFileSync(path);
  expect(bytes.length).toBe(sizes.reduce((sum, size) => sum + size, 0));
  let offset = 0;
  return sizes.map((size) => {
    const part = gunzipSync(bytes.subarray(offset, offset + size));
    offset += size;
    return part;
  });
}

/** The compressed bytes of all the records one append wrote. */
function total(appended: AppendedRecords): number {
  return appended.sizes.reduce((sum, size) => sum + size, 0);
}

const GZIP_1 = { kind: "gzip", level: 1 } as const;
const ZSTD_3 = { kind: "zstd", level: 3 } as const;

function appenders(): [string, RecordAppender][] {
  const worker = new WorkerAppender(GZIP_1);
  onTestFinished(() => worker.close());
  return [
    ["worker", worker],
    ["inline", new InlineAppender(GZIP_1)],
  ];
}

const EXCHANGE = {
  url: "http://a.test/p?q=1",
  ip: "127.0.0.1",
  date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)),
  requestId: "<urn:uuid:00000000-0000-4000-8000-000000000001>",
  responseId: "<urn:uuid:00000000-0000-4000-8000-000000000002>",
  warcinfoId: "<urn:uuid:00000000-0000-4000-8000-000000000003>",
  requestHeaderBlock: "GET /p?q=1 HTTP/1.1\r\nhost: a.test\r\n\r\n",
  responseHeaderBlock: "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\xe9\r\n\r\n",
  body: randomBytes(40_000),
  truncated: true,
};

describe("record appenders", () => {
  it("append each call's records, one gzip member each, in call order, to the call's file", async () => {
    for (const [name, appender] of appenders()) {
      const files = [appendFile(`${name}-a`), appendFile(`${name}-b`)];
      // Calls in one event-loop turn share a message to the worker; later ones go in further messages.
      const batches = Array.from({ length: 30 }, (_, i) => drafts(1 + (i % 3), i));
      const target = (i: number) => files[i % 7 === 3 ? 1 : 0] as { path: string; fd: number };
      const first = batches.slice(0, 20).map((batch, i) => appender.append(target(i).fd, batch));
      await new Promise((resolve) => setImmediate(resolve));
      const rest = batches.slice(20).map((batch, i) => appender.append(target(20 + i).fd, batch));
      const appended = await Promise.all([...first, ...rest]);
      for (const [f, file] of files.entries()) {
        const calls = batches.map((_, i) => i).filter((i) => target(i) === files[f]);
        // Each record's own size cuts the file at its member.
        const decompressed = parts(
          file.path,
          calls.flatMap((i) => appended[i]?.sizes ?? []),
        );
        const records = calls.flatMap((i) => batches[i] as RecordDraft[]);
        records.forEach((record, k) => {
          expect(decompressed[k]?.equals(expected(record)), `${name} record ${k}`).toBe(true);
        });
      }
    }
  });

  it("gather the calls made while a message is with the worker into the next one (Nagle)", async () => {
    const appender = new WorkerAppender(GZIP_1);
    onTestFinished(() => appender.close());
    const file = appendFile("nagle");
    const batches = Array.from({ length: 40 }, (_, i) => drafts(2, i));
    const pending: Promise<AppendedRecords>[] = [];
    // One call per event-loop turn: each would have had a message of its own.
    for (const batch of batches) {
      pending.push(appender.append(file.fd, batch));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const appended = await Promise.all(pending);
    expect(appender.messagesSent).toBeGreaterThanOrEqual(1);
    expect(appender.messagesSent).toBeLessThan(batches.length);
    // Still in call order, each record whole.
    const decompressed = parts(
      file.path,
      appended.flatMap((a) => a.sizes),
    );
    batches.flat().forEach((record, k) => {
      expect(decompressed[k]?.equals(expected(record)), `record ${k}`).toBe(true);
    });
    // An idle appender sends a lone call at once, in a message of its own.
    const before = appender.messagesSent;
    await appender.append(file.fd, drafts(1, 99));
    expect(appender.messagesSent).toBe(before + 1);
  });

  it("fill in the digests: an exchange's records match the serialized form", async () => {
    const [request, response] = exchangeDrafts(EXCHANGE);
    const fields = (concurrentTo: string) =>
      [
        ["WARC-Target-URI", EXCHANGE.url],
        ["WARC-IP-Address", EXCHANGE.ip],
        ["WARC-Concurrent-To", concurrentTo],
        ["WARC-Warcinfo-ID", EXCHANGE.warcinfoId],
      ] as [string, string][];
    const wantRequest = serializeWarcRecord({
      type: "request",
      recordId: EXCHANGE.requestId,
      date: EXCHANGE.date,
      fields: [
        ...fields(EXCHANGE.responseId),
        ["WARC-Block-Digest", sha1(EXCHANGE.requestHeaderBlock)],
        ["WARC-Payload-Digest", sha1()],
        ["Content-Type", "application/http;msgtype=request"],
      ],
      block: [Buffer.from(EXCHANGE.requestHeaderBlock, "latin1")],
    });
    const wantResponse = serializeWarcRecord({
      type: "response",
      recordId: EXCHANGE.responseId,
      date: EXCHANGE.date,
      fields: [
        ...fields(EXCHANGE.requestId),
        ["WARC-Block-Digest", sha1(EXCHANGE.responseHeaderBlock, EXCHANGE.body)],
        ["WARC-Payload-Digest", sha1(EXCHANGE.body)],
        ["WARC-Truncated", "length"],
        ["Content-Type", "application/http;msgtype=response"],
      ],
      block: [Buffer.from(EXCHANGE.responseHeaderBlock, "latin1"), EXCHANGE.body],
    });
    for (const [name, appender] of appenders()) {
      const file = appendFile(name);
      const requestAppended = await appender.append(file.fd, [request]);
      const responseAppended = await appender.append(file.fd, [response]);
      const [gotRequest, gotResponse] = parts(file.path, [total(requestAppended), total(responseAppended)]);
      expect(gotRequest?.equals(wantRequest), name).toBe(true);
      expect(gotResponse?.equals(wantResponse), name).toBe(true);
      // The request's draft carries its (empty) payload's digest; the response's is computed there.
      expect(requestAppended.payloadDigests, name).toEqual([null]);
      expect(
        responseAppended.payloadDigests.map((digest) => `sha1:${digest}`),
        name,
      ).toEqual([sha1(EXCHANGE.body)]);
    }
  });

  it("leave the caller's buffers readable (they are copied, not transferred)", async () => {
    const appender = new WorkerAppender({ kind: "gzip", level: 6 });
    onTestFinished(() => appender.close());
    const input = [Buffer.from("a small pooled buffer"), randomBytes(50_000)];
    const copy = input.map((buffer) => Buffer.from(buffer));
    await appender.append(
      appendFile("copy").fd,
      input.map((buffer) => plain("", buffer)),
    );
    expect(input.map((buffer, i) => buffer.equals(copy[i] as Buffer))).toEqual([true, true]);
  });

  it("reject the calls of a failed write with a storage error, and keep appending afterwards", async () => {
    for (const [name, appender] of appenders()) {
      // /dev/full refuses every write with ENOSPC.
      const full = openSync("/dev/full", "a");
      onTestFinished(() => closeSync(full));
      const good = appendFile(name);
      const calls = [appender.append(good.fd, drafts(1, 1)), appender.append(full, drafts(2, 2))];
      // In the worker, a call sent in the same message after the failed one is not written.
      const after = appender.append(good.fd, drafts(1, 3)).catch((error: unknown) => error);
      const [first, failed] = await Promise.allSettled(calls);
      expect(first?.status, name).toBe("fulfilled");
      expect(failed).toMatchObject({ status: "rejected", reason: { code: ErrorCode.StorageFailed } });
      const afterResult = await after;
      if (name === "worker") expect(afterResult).toMatchObject({ code: ErrorCode.StorageFailed });
      const sizes = [
        total((first as PromiseFulfilledResult<AppendedRecords>).value),
        ...(afterResult instanceof Error ? [] : [total(afterResult as AppendedRecords)]),
        total(await appender.append(good.fd, drafts(1, 4))),
      ];
      const written = [drafts(1, 1), ...(sizes.length === 3 ? [drafts(1, 3)] : []), drafts(1, 4)];
      expect(parts(good.path, sizes).map((part) => part.length)).toEqual(
        written.map((batch) => expected(batch[0] as RecordDraft).length),
      );
    }
  });

  it("reject with a storage error once closed; close is idempotent", async () => {
    const appender = new WorkerAppender(GZIP_1);
    const file = appendFile("closed");
    await appender.append(file.fd, [plain("", Buffer.from("x"))]);
    await appender.close();
    await appender.close();
    await expect(appender.append(file.fd, [plain("", Buffer.from("y"))])).rejects.toMatchObject({
      code: ErrorCode.StorageFailed,
    });
  });
});

describe.skipIf(!zstdAvailable())("record appenders with Zstandard dictionaries", () => {
  it("use each dictionary from the call it was given before, in call order within one batch", async () => {
    const dictionaryOne = buildZstdDictionary([Buffer.from("first dictionary ".repeat(40))], 4096);
    const dictionaryTwo = buildZstdDictionary([Buffer.from("second dictionary ".repeat(40))], 4096);
    for (const appender of [new WorkerAppender(ZSTD_3), new InlineAppender(ZSTD_3)]) {
      onTestFinished(() => appender.close());
      const { path, fd } = appendFile(`dictionaries-${appender.constructor.name}`);
      const [one, two] = [plain("one\r\n", Buffer.from("abc")), plain("two\r\n", Buffer.from("def"))];
      // One event-loop turn: a record, a new dictionary for the same descriptor, another record.
      appender.useDictionary(fd, dictionaryOne.bytes);
      const first = appender.append(fd, [one]);
      appender.useDictionary(fd, dictionaryTwo.bytes);
      const second = appender.append(fd, [two]);
      const sizes = (await Promise.all([first, second])).map(total);
      const bytes = readFileSync(path);
      const frameOne = bytes.subarray(0, sizes[0]);
      const frameTwo = bytes.subarray(sizes[0], (sizes[0] as number) + (sizes[1] as number));
      expect(zstdDecompress(frameOne, dictionaryOne.bytes).equals(expected(one))).toBe(true);
      expect(zstdDecompress(frameTwo, dictionaryTwo.bytes).equals(expected(two))).toBe(true);
      expect(() => zstdDecompress(frameOne, dictionaryTwo.bytes)).toThrow();
    }
  });
});
