import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DURATIONS_FILE, type FileTiming, longestFirst, parseDurations } from "../support/longest-first.js";

/** Files as `project:file:seconds` ("-" for unlisted), ordered by `longestFirst`. */
function order(files: readonly string[]): string[] {
  return longestFirst(files, (entry): FileTiming => {
    const [project = "", , seconds = "-"] = entry.split(":");
    return { project, seconds: seconds === "-" ? undefined : Number(seconds) };
  });
}

describe("the order test files start in", () => {
  it("is longest first within a tier", () => {
    expect(order(["system:a:3", "system:b:31", "system:c:0", "system:d:12"])).toEqual([
      "system:b:31",
      "system:d:12",
      "system:a:3",
      "system:c:0",
    ]);
  });

  it("starts the files the table does not list first, in the order vitest gave them", () => {
    expect(order(["system:a:3", "system:new:-", "system:b:31", "system:short:-"])).toEqual([
      "system:new:-",
      "system:short:-",
      "system:b:31",
      "system:a:3",
    ]);
  });

  it("keeps vitest's order for files of equal seconds", () => {
    expect(order(["timed:x:5", "timed:y:5", "timed:z:9", "timed:w:5"])).toEqual([
      "timed:z:9",
      "timed:x:5",
      "timed:y:5",
      "timed:w:5",
    ]);
  });

  it("keeps the tiers in vitest's order, each with its own files: none crosses into another", () => {
    expect(
      order(["unit:u1:1", "unit:u2:14", "system:s1:3", "system:s2:102", "timed:t1:-", "timed:t2:25"]),
    ).toEqual(["unit:u2:14", "unit:u1:1", "system:s2:102", "system:s1:3", "timed:t1:-", "timed:t2:25"]);
  });

  it("returns nothing for nothing, and leaves its input as it was", () => {
    expect(order([])).toEqual([]);
    const files = ["system:a:1", "system:b:2"];
    order(files);
    expect(files).toEqual(["system:a:1", "system:b:2"]);
  });
});

describe("the table of durations", () => {
  it("reads whole entries and leaves out what is not a number of seconds", () => {
    const table = parseDurations('{"test/a.test.ts": 12, "test/b.test.ts": "12", "test/c.test.ts": -1}');
    expect([...table]).toEqual([["test/a.test.ts", 12]]);
    expect(parseDurations("[1, 2]").size).toBe(0);
  });

  it("committed is an object of test files to whole seconds, every entry kept", () => {
    const text = readFileSync(new URL(`../../${DURATIONS_FILE}`, import.meta.url), "utf8");
    const entries = Object.entries(JSON.parse(text) as Record<string, unknown>);
    expect(entries.length).toBeGreaterThan(0);
    expect(parseDurations(text).size).toBe(entries.length);
    for (const [file, seconds] of entries) {
      expect(file).toMatch(/^test\/.+\.test\.ts$/);
      expect(Number.isInteger(seconds), file).toBe(true);
    }
  });
});
