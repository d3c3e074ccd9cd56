import { createHash, randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { InlineGzip, WorkerGzip } from "../../src/storage/gzip-members.js";
import type { RecordDraft } from "../../src/storage/warc-draft.js";
import { base32, exchangeDrafts, serializeWarcRecord } from "../../src/storage/warc-record.js";

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

describe("gzip members", () => {
  it("compresses each record into its own gzip member, in order, in the worker and inline", async () => {
    const worker = new WorkerGzip(1);
    onTestFinished(() => worker.close());
    const inline = new InlineGzip(1);
    // Calls in one event-loop turn share a message to the worker; later ones go in further messages.
    const batches = Array.from({ length: 30 }, (_, i) => drafts(1 + (i % 3), i));
    const first = batches.slice(0, 20).map((batch) => worker.compress(batch));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = batches.slice(20).map((batch) => worker.compress(batch));
    const results = await Promise.all([...first, ...rest]);
    results.forEach((members, i) => {
      const batch = batches[i] as RecordDraft[];
      expect(members).toHaveLength(batch.length);
      members.forEach((member, j) => {
        // Each member is a complete gzip stream of its record alone.
        expect(gunzipSync(member).equals(expected(batch[j] as RecordDraft))).toBe(true);
      });
      expect(inline.compress(batch).map((member) => gunzipSync(member).length)).toEqual(
        batch.map((draft) => expected(draft).length),
      );
    });
  });

  it("fills in the digests: an exchange's records match the serialized form, in the worker and inline", async () => {
    const worker = new WorkerGzip(1);
    onTestFinished(() => worker.close());
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
    const drafted = [request, response];
    for (const members of [await worker.compress(drafted), new InlineGzip(1).compress(drafted)]) {
      expect(gunzipSync(members[0] as Buffer).equals(wantRequest)).toBe(true);
      expect(gunzipSync(members[1] as Buffer).equals(wantResponse)).toBe(true);
    }
  });

  it("rejects a line break in the URL or address (no injected fields)", () => {
    expect(() => exchangeDrafts({ ...EXCHANGE, url: "http://a.test/\r\nWARC-Type: x" })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(() => exchangeDrafts({ ...EXCHANGE, ip: "1.2.3.4\n" })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });

  it("leaves the caller's buffers readable (they are copied, not transferred)", async () => {
    const worker = new WorkerGzip(6);
    onTestFinished(() => worker.close());
    const input = [Buffer.from("a small pooled buffer"), randomBytes(50_000)];
    const copy = input.map((buffer) => Buffer.from(buffer));
    await worker.compress(input.map((buffer) => plain("", buffer)));
    expect(input.map((buffer, i) => buffer.equals(copy[i] as Buffer))).toEqual([true, true]);
  });

  it("rejects with a storage error once closed; close is idempotent", async () => {
    const worker = new WorkerGzip(1);
    await worker.compress([plain("", Buffer.from("x"))]);
    await worker.close();
    await worker.close();
    await expect(worker.compress([plain("", Buffer.from("y"))])).rejects.toMatchObject({
      code: ErrorCode.StorageFailed,
    });
  });
});
