import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PageArchive } from "../../src/agent/page-archive.js";
import type { FetchResult } from "../../src/fetching/index.js";
import {
  CrawlLog,
  IDENTICAL_PAYLOAD_PROFILE,
  SERVER_NOT_MODIFIED_PROFILE,
  WarcWriter,
  warcFileCompression,
} from "../../src/storage/index.js";
import { readWarcFile, type WarcRecordRead } from "../../src/storage/warc-reader.js";

const URL_A = "http://a.test/page.html";

function fetched(status: number, body: string, startedAtMs: number): FetchResult {
  const bytes = Buffer.from(body);
  return {
    url: URL_A,
    ip: "127.1.0.1",
    status,
    statusText: status === 304 ? "Not Modified" : "OK",
    httpVersion: "1.1",
    requestTarget: new URL(URL_A).pathname,
    requestHeaders: [["host", "a.test"]],
    responseHeaders:
      status === 304
        ? [["ETag", '"x"']]
        : [
            ["Content-Type", "text/html"],
            ["ETag", '"x"'],
          ],
    contentType: status === 304 ? "" : "text/html",
    rawBody: bytes,
    body: bytes,
    wireBytes: bytes.byteLength,
    truncated: false,
    startedAtMs,
    durationMs: 3,
  };
}

/**
 * The archive of a recrawl (`--recrawl`, duplicate detection off): a 304 and an unchanged 200 are
 * revisits of the URL's last capture, of the profiles WARC 1.1 names, and warcio reads them back.
 */
describe("PageArchive with a URL's last capture", () => {
  let dir: string;
  let warc: WarcWriter;
  let crawlLog: CrawlLog;
  let archive: PageArchive;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-archive-recrawl-"));
    warc = new WarcWriter({ dir: join(dir, "warc"), agentId: "a1" });
    await warc.open();
    crawlLog = new CrawlLog({ dir });
    await crawlLog.open();
    archive = new PageArchive(warc, crawlLog, undefined, true);
  });

  afterEach(async () => {
    await warc.close();
    await crawlLog.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function records(): Promise<WarcRecordRead[]> {
    await warc.close();
    const read: WarcRecordRead[] = [];
    const files = (await readdir(join(dir, "warc"))).filter(
      (name) => warcFileCompression(name) !== undefined,
    );
    for (const file of files.sort())
      for await (const record of readWarcFile(join(dir, "warc", file))) read.push(record);
    return read;
  }

  it("stores a first capture whole, with the digest a revisit compares with", async () => {
    const first = await archive.store(fetched(200, "<p>one</p>", 1_000));
    expect(first.change).toBeUndefined();
    expect(first.capture?.digest).toMatch(/^sha1:[A-Z2-7]{32}$/);
    expect(first.capture?.original.url).toBe(URL_A);
  });

  it("writes a 304 as a server-not-modified revisit and an unchanged 200 as an identical-payload one, both of the first response", async () => {
    const first = await archive.store(fetched(200, "<p>one</p>", 1_000));
    const last = first.capture;
    const notModified = await archive.store(fetched(304, "", 2_000), undefined, last);
    const unchanged = await archive.store(fetched(200, "<p>one</p>", 3_000), undefined, last);
    const changed = await archive.store(fetched(200, "<p>two</p>", 4_000), undefined, last);
    expect([notModified.change, unchanged.change, changed.change]).toEqual([
      "not-modified",
      "unchanged",
      "changed",
    ]);
    expect(notModified.capture).toEqual(last);
    expect(unchanged.capture).toEqual(last);
    expect(changed.capture?.digest).not.toBe(last?.digest);

    const read = await records();
    const response = read.filter((record) => record.type === "response");
    const revisits = read.filter((record) => record.type === "revisit");
    // The first and the changed page are stored; the two others refer to the first.
    expect(response.length).toBe(2);
    expect(revisits.map((record) => record.headers.get("warc-profile"))).toEqual([
      SERVER_NOT_MODIFIED_PROFILE,
      IDENTICAL_PAYLOAD_PROFILE,
    ]);
    const firstId = response[0]?.headers.get("warc-record-id");
    for (const revisit of revisits) {
      expect(revisit.headers.get("warc-refers-to")).toBe(firstId);
      expect(revisit.headers.get("warc-refers-to-target-uri")).toBe(URL_A);
      expect(revisit.headers.get("warc-refers-to-date")).toBe(new Date(1_000).toISOString());
    }
    expect(revisits[0]?.headers.has("warc-payload-digest")).toBe(false);
    expect(revisits[1]?.headers.get("warc-payload-digest")).toBe(
      response[0]?.headers.get("warc-payload-digest"),
    );
    expect(Buffer.from(revisits[0]?.block ?? []).toString("latin1")).toMatch(
      /^HTTP\/1\.1 304 Not Modified\r\n/,
    );
  });
});
