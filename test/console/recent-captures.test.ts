import { describe, expect, it } from "vitest";
import { MAX_INDEX_LINES, RecentCaptures } from "../../src/console/recent-captures.js";
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
    // The index holds the host's captures still kept: not the forgotten one.
    expect(captures.indexOf("http://a.test/3", "20261128120004")?.map((c) => c.url)).toEqual([
      "http://a.test/1",
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

  it("gives a capture's index with its host's latest captures (its frames render too), not other hosts'", () => {
    const captures = new RecentCaptures();
    captures.record(line("http://a.test/page", 1, "PAGE"));
    captures.record(line("http://a.test/embed/i0.html", 2, "FRAME"));
    captures.record(line("http://b.test/other", 3, "OTHER"));
    captures.record(line("http://a.test:8080/port", 4, "PORT"));
    captures.record(line("http://b.test/original", 5, "SAME"));
    captures.record(line("http://a.test/alias", 6, "SAME", true));
    const index = captures.indexOf("http://a.test/page", "20261128120001") ?? [];
    expect(index.map((capture) => capture.url).sort()).toEqual([
      "http://a.test/alias",
      "http://a.test/embed/i0.html",
      "http://a.test/page",
      "http://b.test/original",
    ]);
    expect(index.map((capture) => capture.line)).toEqual(index.map((capture) => capture.line).sort());
  });

  it("bounds that index, keeping the capture itself and its host's newest", () => {
    const captures = new RecentCaptures({ capacity: MAX_INDEX_LINES * 2 });
    captures.record(line("http://a.test/first", 0, "FIRST"));
    for (let i = 1; i <= MAX_INDEX_LINES + 10; i++)
      captures.record(line(`http://a.test/p${i}`, i % 60, `D${i}`));
    const first = captures.latest("http://a.test/first");
    const index = captures.indexOf("http://a.test/first", first?.timestamp ?? "") ?? [];
    expect(index).toHaveLength(MAX_INDEX_LINES);
    const urls = new Set(index.map((capture) => capture.url));
    expect(urls.has("http://a.test/first")).toBe(true);
    expect(urls.has(`http://a.test/p${MAX_INDEX_LINES + 10}`)).toBe(true);
    expect(urls.has("http://a.test/p1")).toBe(false);
  });
});
