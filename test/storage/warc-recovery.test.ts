import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  appendFile,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  truncate,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { WarcExchange } from "../../src/storage/warc-exchange.js";
import { warcFileCompression } from "../../src/storage/warc-file-name.js";
import { readWarcFile, splitHttpBlock } from "../../src/storage/warc-reader.js";
import { recoverWarcFile } from "../../src/storage/warc-recovery.js";
import { WarcWriter } from "../../src/storage/warc-writer.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-warc-recovery-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function exchange(i: number, body: Uint8Array = Buffer.from(`page ${i} `.repeat(50))): WarcExchange {
  return {
    url: `http://host.test/p/${i}`,
    ip: "127.0.0.1",
    date: new Date(Date.UTC(2024, 0, 1, 0, 0, i)),
    requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\nHost: host.test\r\n\r\n`,
    responseHeaderBlock: `HTTP/1.1 200 OK\r\nContent-Length: ${body.byteLength}\r\n\r\n`,
    body,
  };
}

/** Writes `count` exchanges with a real writer, then turns the file back into a live `.open` file. */
async function leftoverOpenFile(
  count: number,
  agentId = "a1",
  body?: (i: number) => Uint8Array,
): Promise<string> {
  const writer = new WarcWriter({ dir, agentId });
  await writer.open();
  for (let i = 0; i < count; i++) await writer.write(exchange(i, body?.(i)));
  await writer.close();
  const name = (await readdir(dir)).find((f) => f.endsWith(`-${agentId}.warc.gz`)) as string;
  await rename(join(dir, name), join(dir, `${name}.open`));
  return join(dir, name);
}

async function responseUrls(path: string): Promise<string[]> {
  const urls: string[] = [];
  for await (const record of readWarcFile(path)) {
    if (record.type === "response") urls.push(record.headers.get("warc-target-uri") as string);
  }
  return urls;
}

const urlsUpTo = (n: number) => Array.from({ length: n }, (_, i) => `http://host.test/p/${i}`);

describe("WARC crash recovery", () => {
  it("cuts half a gzip member off a leftover .open file on open and keeps every intact record", async () => {
    const path = await leftoverOpenFile(10);
    const intactSize = (await stat(`${path}.open`)).size;
    const member = gzipSync(
      Buffer.from(
        `WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 3000\r\n\r\n${"x".repeat(3000)}\r\n\r\n`,
      ),
    );
    await appendFile(`${path}.open`, member.subarray(0, member.length >> 1));

    const writer = new WarcWriter({ dir, agentId: "a1" });
    await writer.open();
    expect(writer.stats().recoveredFiles).toBe(1);
    expect((await stat(path)).size).toBe(intactSize);
    expect(await responseUrls(path)).toEqual(urlsUpTo(10));
    await promisify(execFile)("gzip", ["-t", path]).catch((error: { code?: string }) => {
      if (error.code !== "ENOENT") throw error; // no gzip binary: nothing more to check
    });

    // The restarted writer goes on in a new file.
    await writer.write(exchange(10));
    await writer.close();
    const files = (await readdir(dir)).filter((name) => warcFileCompression(name) !== undefined).sort();
    expect(files).toHaveLength(2);
    expect(files[1]).toMatch(/-00002-a1\.warc\.gz$/);
  });

  it("cuts a random garbage tail", async () => {
    const path = await leftoverOpenFile(4);
    const intactSize = (await stat(`${path}.open`)).size;
    await appendFile(`${path}.open`, randomBytes(5000));
    const result = await recoverWarcFile(`${path}.open`);
    expect(result).toEqual({ path, records: 9, keptBytes: intactSize, droppedBytes: 5000 });
    expect(await responseUrls(path)).toEqual(urlsUpTo(4));
  });

  it("cuts a complete gzip member whose WARC record is incomplete", async () => {
    const path = await leftoverOpenFile(3);
    const intactSize = (await stat(`${path}.open`)).size;
    const torn = gzipSync(
      Buffer.from("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 500\r\n\r\nonly the start"),
    );
    await appendFile(`${path}.open`, torn);
    const result = await recoverWarcFile(`${path}.open`);
    expect(result.keptBytes).toBe(intactSize);
    expect(result.droppedBytes).toBe(torn.length);
    expect(await responseUrls(path)).toEqual(urlsUpTo(3));
  });

  it("drops a real record torn in the middle, keeping the ones before it", async () => {
    const path = await leftoverOpenFile(6);
    const size = (await stat(`${path}.open`)).size;
    await truncate(`${path}.open`, size - 40);
    const result = await recoverWarcFile(`${path}.open`);
    // The last response is torn, and its request goes with it: no request is left without a partner.
    expect(result.records).toBe(1 + 2 * 5);
    expect(await responseUrls(path)).toEqual(urlsUpTo(5));
    const types: string[] = [];
    for await (const record of readWarcFile(path)) types.push(record.type);
    expect(types.at(-1)).toBe("response");
  });

  it("cuts a complete request record left last without its response", async () => {
    const path = await leftoverOpenFile(3);
    const intactSize = (await stat(`${path}.open`)).size;
    const block = "GET /p/3 HTTP/1.1\r\nHost: host.test\r\n\r\n";
    const request = gzipSync(
      Buffer.from(
        `WARC/1.1\r\nWARC-Type: request\r\nContent-Length: ${block.length}\r\n\r\n${block}\r\n\r\n`,
      ),
    );
    await appendFile(`${path}.open`, request);
    const result = await recoverWarcFile(`${path}.open`);
    expect(result).toEqual({ path, records: 7, keptBytes: intactSize, droppedBytes: request.length });
    expect(await responseUrls(path)).toEqual(urlsUpTo(3));
  });

  it("handles members larger than the scan window", async () => {
    const path = await leftoverOpenFile(3, "a1", (i) => randomBytes(i === 1 ? 5 * 1024 * 1024 : 2000));
    const intactSize = (await stat(`${path}.open`)).size;
    await appendFile(`${path}.open`, Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]));
    const result = await recoverWarcFile(`${path}.open`);
    expect(result.keptBytes).toBe(intactSize);
    expect(await responseUrls(path)).toEqual(urlsUpTo(3));
    const body = await (async () => {
      for await (const record of readWarcFile(path)) {
        if (record.headers.get("warc-target-uri") === urlsUpTo(3)[1] && record.type === "response") {
          return splitHttpBlock(record.block).payload;
        }
      }
      return undefined;
    })();
    expect(body?.byteLength).toBe(5 * 1024 * 1024);
  });

  it("removes an .open file with nothing intact in it", async () => {
    const openPath = join(dir, "ubicrawl-20240101000000-00001-a1.warc.gz.open");
    await writeFile(openPath, randomBytes(300));
    expect(await recoverWarcFile(openPath)).toEqual({
      path: undefined,
      records: 0,
      keptBytes: 0,
      droppedBytes: 300,
    });
    expect(await readdir(dir)).toEqual([]);
    await expect(recoverWarcFile(join(dir, "x.warc.gz"))).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
  });

  it("leaves other agents' live files alone", async () => {
    const other = await leftoverOpenFile(2, "other");
    const before = await readFile(`${other}.open`);
    const writer = new WarcWriter({ dir, agentId: "a1" });
    await writer.open();
    expect(writer.stats().recoveredFiles).toBe(0);
    expect((await readFile(`${other}.open`)).equals(before)).toBe(true);
    await writer.close();
  });
});
