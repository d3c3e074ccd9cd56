import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { mergeCdxjIndexes } from "../../src/export/cdxj-merge.js";
import { cdxjLine } from "../../src/storage/cdxj.js";

/** The k-way merge of per-WARC indexes, on index files written by the indexer's own line writer. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-merge-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A sorted index of `count` pages of `host` in file `filename`, written to `name`. */
async function writeIndex(name: string, host: string, count: number, filename: string): Promise<string> {
  const lines = Array.from({ length: count }, (_, i) =>
    cdxjLine({
      url: `http://${host}:8080/p/${(i * 7919) % 1000}`,
      date: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)),
      revisit: i % 5 === 0,
      httpHeaderBlock: "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n",
      digest: `D${i}`,
      offset: i * 100,
      length: 100,
      filename,
    }),
  ).sort();
  const path = join(dir, name);
  await writeFile(path, lines.join(""));
  return path;
}

async function collect(inputs: { indexPath: string; filename: string }[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of mergeCdxjIndexes(inputs)) lines.push(line);
  return lines;
}

describe("mergeCdxjIndexes", () => {
  it("yields every line of every index in text order, each naming its file's name in the package", async () => {
    const inputs = [
      { indexPath: await writeIndex("a.cdxj", "b.ubi.test", 300, "old-a.warc.gz"), filename: "a.warc.gz" },
      { indexPath: await writeIndex("b.cdxj", "a.ubi.test", 200, "old-b.warc.gz"), filename: "b.warc.gz" },
      { indexPath: await writeIndex("c.cdxj", "b.ubi.test", 100, "old-c.warc.gz"), filename: "c.warc.gz" },
    ];
    const merged = await collect(inputs);
    expect(merged).toHaveLength(600);
    expect(merged).toEqual([...merged].sort());
    const named = (file: string) => merged.filter((line) => line.endsWith(`"filename": "${file}"}`)).length;
    expect([named("a.warc.gz"), named("b.warc.gz"), named("c.warc.gz")]).toEqual([300, 200, 100]);
    expect(merged.some((line) => line.includes("old-"))).toBe(false);
  });

  it("drops a line equal to the one before it (the same file's index given twice)", async () => {
    const path = await writeIndex("a.cdxj", "a.ubi.test", 50, "a.warc.gz");
    const merged = await collect([
      { indexPath: path, filename: "a.warc.gz" },
      { indexPath: path, filename: "a.warc.gz" },
    ]);
    expect(merged).toHaveLength(50);
  });

  it("refuses an index out of order, and names an index it cannot read", async () => {
    const path = await writeIndex("a.cdxj", "a.ubi.test", 20, "a.warc.gz");
    const reversed = join(dir, "reversed.cdxj");
    await writeFile(
      reversed,
      `${(await readFile(path, "utf8")).trimEnd().split("\n").reverse().join("\n")}\n`,
    );
    await expect(collect([{ indexPath: reversed, filename: "a.warc.gz" }])).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
    await expect(
      collect([{ indexPath: join(dir, "missing.cdxj"), filename: "m.warc.gz" }]),
    ).rejects.toMatchObject({
      code: ErrorCode.StorageFailed,
      message: expect.stringContaining("missing.cdxj"),
    });
  });
});
