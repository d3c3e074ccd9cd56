import { describe, expect, it } from "vitest";
import { RecentCaptures } from "../../src/console/recent-captures.js";
import { cdxjLine } from "../../src/storage/cdxj.js";

/** The console's memory of recent captures: bounded, by URL, with a revisit's original when kept. */

const line = (url: string, second: number, digest: string, revisit = false) =>
  cdxjLine({
    url,
    date: new Date(Date.UTC(2026, 10, 28, 12, 0, second)),
    revisit,
    httpHeaderBlock: "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n",
    digest,
    offset: second * 100,
    length: 100,
    filename: "ubicrawl-20261128120000-00001-a.warc.gz",
  });

describe("RecentCaptures", () => {
  it("keeps the last capture of each URL, up to its capacity, oldest forgotten first", () => {
    const captures = new RecentCaptures({ capacity: 2 });
    captures.record(line("http://a.test/1", 1, "AAAA"));
    captures.record(line("http://a.test/2", 2, "BBBB"));
    captures.record(line("http://a.test/1", 3, "CCCC"));
    captures.record(line("http://a.test/3", 4, "DDDD"));
    expect(captures.latest("http://a.test/2")).toBeUndefined();
    expect(captures.latest("http://a.test/1")?.timestamp).toBe("20261128120003");
    expect(captures.indexOf("http://a.test/1", "20261128120001")).toBeUndefined();
    expect(captures.indexOf("http://a.test/3", "20261128120004")?.map((c) => c.url)).toEqual([
      "http://a.test/3",
    ]);
    captures.record("not a CDXJ line");
    expect(captures.latest("http://a.test/3")).toBeDefined();
  });

  it("gives a revisit's index with its original's line, sorted, when the original is kept", () => {
    const captures = new RecentCaptures();
    captures.record(line("http://b.test/original", 1, "SAME"));
    captures.record(line("http://a.test/alias", 2, "SAME", true));
    const index = captures.indexOf("http://a.test/alias", "20261128120002") ?? [];
    expect(index.map((capture) => capture.url)).toEqual(["http://a.test/alias", "http://b.test/original"]);
    expect(index.map((capture) => capture.revisit)).toEqual([true, false]);
    expect(index.every((capture) => capture.line.endsWith("\n"))).toBe(true);
  });
});
