import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { AGENT_FLAGS, MIN_MAX_BANDWIDTH } from "../../src/flags/agent-flags.js";
import { formatByteRate, parseByteRate } from "../../src/flags/byte-rate.js";
import { formatHelp, parseFlags } from "../../src/flags/flag-parser.js";

const EXAMPLES = "5MB/s, 512k, 2MiB, 10Mbit/s or 250000 (bytes per second)";

describe("parseByteRate", () => {
  it("reads bytes per second in B, KB, MB, GB (and KiB…), with or without /s, case-blind", () => {
    expect(parseByteRate("5MB/s", "--x")).toBe(5 * 1024 * 1024);
    expect(parseByteRate("800 KB/s", "--x")).toBe(800 * 1024);
    expect(parseByteRate("1.5GiB/s", "--x")).toBe(1.5 * 1024 ** 3);
    expect(parseByteRate("250000", "--x")).toBe(250_000);
    expect(parseByteRate("64kb", "--x")).toBe(64 * 1024);
    expect(parseByteRate("10 b / s", "--x")).toBe(10);
  });

  it("reads the short units (k, M, G: powers of 1,024) and bits (powers of 1,000)", () => {
    expect(parseByteRate("512k", "--x")).toBe(512 * 1024);
    expect(parseByteRate("5M", "--x")).toBe(5 * 1024 ** 2);
    expect(parseByteRate("2MiB", "--x")).toBe(2 * 1024 ** 2);
    expect(parseByteRate("1g/s", "--x")).toBe(1024 ** 3);
    expect(parseByteRate("10Mbit/s", "--x")).toBe(1_250_000);
    expect(parseByteRate("800 kbit", "--x")).toBe(100_000);
    expect(parseByteRate("1Gbit/s", "--x")).toBe(125_000_000);
  });

  it("refuses anything else, naming the flag", () => {
    for (const bad of [
      "",
      "fast",
      "0MB/s",
      "-5MB/s",
      "5TB/s",
      "5 MB per s",
      "5ib",
      "1e9",
      "5Mbps",
      "5 k b",
    ]) {
      expect(() => parseByteRate(bad, "--max-bandwidth")).toThrow(
        `--max-bandwidth must be a positive rate such as ${EXAMPLES}, got "${bad}"`,
      );
    }
  });

  it("refuses a rate under its least, saying what the text came to and, for a bare number, the unit", () => {
    expect(() => parseByteRate("5", "--max-bandwidth", 1024)).toThrow(
      '--max-bandwidth must be at least 1KB/s (1,024 bytes per second), got "5": 5 bytes per second, ' +
        "since a number without a unit counts bytes per second; write the unit, e.g. 5KB/s or 5MB/s",
    );
    expect(() => parseByteRate("0.5KB/s", "--max-bandwidth", 1024)).toThrow(
      '--max-bandwidth must be at least 1KB/s (1,024 bytes per second), got "0.5KB/s": 512 bytes per second',
    );
    expect(() => parseByteRate("8kbit", "--max-bandwidth", 1024)).toThrow(
      /got "8kbit": 1,000 bytes per second$/,
    );
    expect(parseByteRate("1024", "--max-bandwidth", 1024)).toBe(1024);
    expect(parseByteRate("1k", "--max-bandwidth", 1024)).toBe(1024);
  });

  it("formats a rate as the flags write it", () => {
    expect(formatByteRate(1024)).toBe("1KB/s");
    expect(formatByteRate(5 * 1024 ** 2)).toBe("5MB/s");
    expect(formatByteRate(1.5 * 1024 ** 3)).toBe("1.5GB/s");
    expect(formatByteRate(100)).toBe("100B/s");
  });
});

describe("--max-bandwidth (the agent's flag parser)", () => {
  const parse = (...argv: string[]) => parseFlags(["--id", "a", ...argv], AGENT_FLAGS);

  it("is a number of bytes per second, from a unit or a bare number of at least 1 KB/s", () => {
    expect(MIN_MAX_BANDWIDTH).toBe(1024);
    expect(parse()["max-bandwidth"]).toBeUndefined();
    expect(parse("--max-bandwidth", "5M")["max-bandwidth"]).toBe(5 * 1024 ** 2);
    expect(parse("--max-bandwidth=512k")["max-bandwidth"]).toBe(512 * 1024);
    expect(parse("--max-bandwidth", "10Mbit/s")["max-bandwidth"]).toBe(1_250_000);
    expect(parse("--max-bandwidth", "250000")["max-bandwidth"]).toBe(250_000);
  });

  it("refuses 5 (5 bytes per second) with the unit named, not silently", () => {
    expect(() => parse("--max-bandwidth", "5")).toThrow(
      expect.objectContaining({
        code: ErrorCode.InvalidArgument,
        message: expect.stringContaining(
          '--max-bandwidth must be at least 1KB/s (1,024 bytes per second), got "5": 5 bytes per second, since a number without a unit counts bytes per second',
        ),
      }),
    );
    expect(() => parse("--max-bandwidth", "fast")).toThrow(
      `--max-bandwidth must be a positive rate such as ${EXAMPLES}`,
    );
  });

  it("documents its units and least in --help", () => {
    const help = formatHelp("ubicrawl agent", "", AGENT_FLAGS);
    const line = help.split("\n").find((row) => row.startsWith("  --max-bandwidth RATE")) ?? "";
    for (const part of [
      "5MB/s",
      "512k",
      "2MiB",
      "10Mbit/s",
      "a bare number counts bytes per second",
      "at least 1KB/s",
    ]) {
      expect(line).toContain(part);
    }
  });
});
