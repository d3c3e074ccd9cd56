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

  it.each(["", "  ", "http://spam.test/", "spam test", "*", "*.", "a/b", "x".repeat(263)])(
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
});
