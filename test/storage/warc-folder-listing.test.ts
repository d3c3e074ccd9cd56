import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { WarcExchange } from "../../src/storage/warc-exchange.js";
import { WarcFolderListing } from "../../src/storage/warc-folder-listing.js";
import { readWarcFile } from "../../src/storage/warc-reader.js";
import { WarcWriter } from "../../src/storage/warc-writer.js";

/**
 * An agent's WARC folder as `ubicrawl export --agent` downloads it: finished files with their indexes,
 * the live file up to its whole records (a WARC file that reads to its end), and nothing else.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-listing-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function exchange(i: number): WarcExchange {
  const body = randomBytes(500);
  return {
    url: `http://h${i % 2}.test/p/${i}`,
    ip: "127.0.0.1",
    date: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\n\r\n`,
    responseHeaderBlock: `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`,
    body,
  };
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe("WarcFolderListing", () => {
  it("lists finished files with their indexes and the live one, and reads only those", async () => {
    const first = new WarcWriter({ dir, agentId: "a" });
    await first.open();
    for (let i = 0; i < 5; i++) await first.write(exchange(i));
    await first.close();
    const writer = new WarcWriter({ dir, agentId: "a" });
    await writer.open();
    for (let i = 5; i < 9; i++) await writer.write(exchange(i));
    await writer.syncAppended();
    // Something else in the folder is neither listed nor readable.
    await writeFile(join(dir, "notes.txt"), "private\n");
    const listing = new WarcFolderListing(dir, "a", () => writer.liveExtent());
    const { agentId, files } = await listing.list();
    expect(agentId).toBe("a");
    expect(files.map((file) => file.live)).toEqual([false, true]);
    const [finished, live] = files as [(typeof files)[0], (typeof files)[0]];
    expect(finished.indexBytes).toBeGreaterThan(0);
    expect(live.indexBytes).toBe(0);
    expect(live.bytes).toBe(writer.liveExtent()?.bytes);

    const whole = await bytesOf(await listing.open(finished.name, 0, 1024));
    expect(whole.equals(await readFile(join(dir, finished.name)))).toBe(true);
    const index = await bytesOf(await listing.open(`${finished.name}.cdxj`, 0, 1024));
    expect(index.toString("utf8").trim().split("\n")).toHaveLength(5);
    // The live file as of its whole records: a WARC file that reads to its end.
    const snapshot = join(dir, "snapshot.warc.gz");
    await writeFile(snapshot, await bytesOf(await listing.open(live.name, live.bytes, 1024)));
    const urls: string[] = [];
    for await (const record of readWarcFile(snapshot)) {
      if (record.type === "response") urls.push(record.headers.get("warc-target-uri") ?? "");
    }
    expect(urls).toEqual([5, 6, 7, 8].map((i) => exchange(i).url));

    for (const name of ["notes.txt", "../notes.txt", `${live.name}.cdxj`, `${live.name}.open`, "state"]) {
      await expect(listing.open(name, 0, 1024), name).rejects.toMatchObject({
        code: ErrorCode.InvalidArgument,
      });
    }
    await writer.close();
  });
});
