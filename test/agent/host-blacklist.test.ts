import { describe, expect, it } from "vitest";
import { HostBlacklist } from "../../src/agent/host-blacklist.js";
import { ErrorCode } from "../../src/errors.js";

describe("the host blacklist", () => {
  it("matches a host key exactly, a host name on any port, and *.domain below the domain only", () => {
    const list = new HostBlacklist(["spam.test:8080", "Ads.Example.ORG", "*.tracker.test"]);
    expect(list.matches("spam.test:8080")).toBe(true);
    expect(list.matches("spam.test:80")).toBe(false);
    expect(list.matches("ads.example.org:443")).toBe(true);
    expect(list.matches("ads.example.org:80")).toBe(true);
    expect(list.matches("www.ads.example.org:80")).toBe(false);
    expect(list.matches("a.tracker.test:80")).toBe(true);
    expect(list.matches("a.b.tracker.test:443")).toBe(true);
    expect(list.matches("tracker.test:80")).toBe(false);
    expect(list.matches("nottracker.test:80")).toBe(false);
    expect(new HostBlacklist().matches("anything.test:80")).toBe(false);
  });

  it("reads IPv6 host keys by their bracketed name", () => {
    const list = new HostBlacklist(["[::1]"]);
    expect(list.matches("[::1]:8080")).toBe(true);
    expect(list.matches("[::2]:8080")).toBe(false);
  });

  it("adds and removes patterns case-insensitively, saying whether anything changed", () => {
    const list = new HostBlacklist();
    expect(list.add("Spam.Test")).toBe(true);
    expect(list.add("spam.test")).toBe(false);
    expect(list.size).toBe(1);
    expect(list.remove("SPAM.test")).toBe(true);
    expect(list.remove("spam.test")).toBe(false);
    expect(list.matches("spam.test:80")).toBe(false);
  });

  it("saves as a sorted list that builds the same blacklist", () => {
    const list = new HostBlacklist(["b.test", "*.a.test", "a.test:81"]);
    const saved = JSON.parse(JSON.stringify(list)) as string[];
    expect(saved).toEqual(["*.a.test", "a.test:81", "b.test"]);
    expect(new HostBlacklist(saved).toJSON()).toEqual(saved);
  });

  it.each(["", "  ", "http://spam.test/", "spam test", "*", "*.", "a/b", "x".repeat(263), "spam.test:65536"])(
    "refuses %j, saying what a pattern looks like",
    (pattern) => {
      expect(() => new HostBlacklist().add(pattern)).toThrow(
        expect.objectContaining({
          code: ErrorCode.InvalidArgument,
          message: expect.stringMatching(/host pattern/),
        }),
      );
    },
  );

  it("merges another agent's entries: per pattern the later change wins, removals included, in any order", () => {
    const a = new HostBlacklist();
    const b = new HostBlacklist();
    a.add("spam.test", { atMs: 1000, by: "agent-a" });
    b.add("ads.test", { atMs: 1100, by: "agent-b" });
    b.remove("ads.test", { atMs: 1200, by: "agent-b" });
    expect(b.merge(a.entries())).toEqual({ added: ["spam.test"], removed: [] });
    expect(a.merge(b.entries())).toEqual({ added: [], removed: [] });
    // Both hold the same entries, the removal of ads.test kept as one (so an older add cannot revive it).
    expect(a.entries()).toEqual(b.entries());
    expect(a.toJSON()).toEqual(["spam.test"]);
    expect(
      a.merge([{ pattern: "ads.test", blocked: true, changedAtMs: 1150, changedBy: "agent-c" }]),
    ).toEqual({
      added: [],
      removed: [],
    });
    // A later removal of spam.test wins; an equal time is settled by the agent id.
    expect(
      a.merge([{ pattern: "spam.test", blocked: false, changedAtMs: 1300, changedBy: "agent-b" }]),
    ).toEqual({
      added: [],
      removed: ["spam.test"],
    });
    expect(
      a.merge([{ pattern: "spam.test", blocked: true, changedAtMs: 1300, changedBy: "agent-a" }]).added,
    ).toEqual([]);
    expect(
      a.merge([{ pattern: "spam.test", blocked: true, changedAtMs: 1300, changedBy: "agent-c" }]).added,
    ).toEqual(["spam.test"]);
    // Malformed patterns from a peer are skipped.
    expect(
      a.merge([{ pattern: "not a pattern", blocked: true, changedAtMs: 9999, changedBy: "x" }]).added,
    ).toEqual([]);
  });

  it("dates a change made here after every change it knows, whatever the clock says", () => {
    const list = new HostBlacklist();
    list.merge([{ pattern: "spam.test", blocked: false, changedAtMs: 5000, changedBy: "agent-z" }]);
    // This agent's clock is behind agent-z's: its add must still win over the removal it knows of.
    expect(list.add("spam.test", { atMs: 4000, by: "agent-a" })).toBe(true);
    expect(list.entries()).toEqual([
      { pattern: "spam.test", blocked: true, changedAtMs: 5001, changedBy: "agent-a" },
    ]);
    const other = new HostBlacklist();
    other.merge([{ pattern: "spam.test", blocked: false, changedAtMs: 5000, changedBy: "agent-z" }]);
    expect(other.merge(list.entries()).added).toEqual(["spam.test"]);
  });

  it("lists its entries sorted by pattern, whatever order the changes came in", () => {
    const list = new HostBlacklist();
    for (const pattern of ["c.test", "a.test", "b.test", "a.test:81"])
      list.add(pattern, { atMs: 1, by: "agent-a" });
    list.remove("b.test", { atMs: 2, by: "agent-a" });
    expect(list.entries().map((entry) => entry.pattern)).toEqual(["a.test", "a.test:81", "b.test", "c.test"]);
    // Entries made without a change time (an old saved list) date from 0, by no agent.
    expect(new HostBlacklist(["old.test"]).entries()).toEqual([
      { pattern: "old.test", blocked: true, changedAtMs: 0, changedBy: "" },
    ]);
  });

  it("trims and lower-cases a pattern to remove, as one to add", () => {
    const list = new HostBlacklist(["spam.test"]);
    expect(list.remove("  SPAM.test \t")).toBe(true);
    expect(list.size).toBe(0);
  });

  it("settles changes at the same time by agent id, and the same change twice in favour of the block", () => {
    const at = (blocked: boolean, changedAtMs: number, changedBy: string) => [
      { pattern: "x.test", blocked, changedAtMs, changedBy },
    ];
    const list = new HostBlacklist();
    list.merge(at(true, 100, "agent-m"));
    // Earlier, or as early by a smaller id: ignored.
    expect(list.merge(at(false, 99, "agent-z")).removed).toEqual([]);
    expect(list.merge(at(false, 100, "agent-a")).removed).toEqual([]);
    // As early by the same agent: a removal does not beat a block…
    expect(list.merge(at(false, 100, "agent-m")).removed).toEqual([]);
    // …by a larger id it does, and then a block by that same agent at that time wins back.
    expect(list.merge(at(false, 100, "agent-n")).removed).toEqual(["x.test"]);
    expect(list.merge(at(true, 100, "agent-n")).added).toEqual(["x.test"]);
    expect(list.merge(at(false, 100, "agent-n")).removed).toEqual([]);
    expect(list.toJSON()).toEqual(["x.test"]);
  });

  it("takes ports up to 65535, on names and bracketed IPv6 addresses, and patterns up to 262 characters", () => {
    const list = new HostBlacklist();
    expect(list.add("spam.test:65535")).toBe(true);
    expect(list.add("[::1]")).toBe(true);
    expect(list.add("[::1]:65535")).toBe(true);
    expect(list.add(`${"x".repeat(257)}.test`)).toBe(true);
    expect(() => list.add("[::1]:65536")).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(list.matches("[::1]:8080")).toBe(true);
    expect(list.matches("[::1]")).toBe(true);
  });

  it("matches host keys without a port (a default port) by name and by domain, an empty first label too", () => {
    const list = new HostBlacklist(["ads.example.org", "*.tracker.test"]);
    expect(list.matches("ads.example.org")).toBe(true);
    expect(list.matches("a.tracker.test")).toBe(true);
    expect(list.matches("a.b.tracker.test")).toBe(true);
    expect(list.matches("tracker.test")).toBe(false);
    // WHATWG URLs take a host name that starts with a dot: it is still under the domain.
    expect(list.matches(".tracker.test")).toBe(true);
    expect(list.matches(".tracker.test:8080")).toBe(true);
  });

  it("trims a pattern to add, and still checks its port", () => {
    const list = new HostBlacklist();
    expect(list.add("  Spam.Test\t")).toBe(true);
    expect(list.toJSON()).toEqual(["spam.test"]);
    expect(list.add(" spam.test:8080 ")).toBe(true);
    expect(list.matches("spam.test:8080")).toBe(true);
  });
});
