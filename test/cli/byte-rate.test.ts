import { describe, expect, it } from "vitest";
import { parseByteRate } from "../../src/cli/byte-rate.js";

describe("parseByteRate", () => {
  it("reads bytes per second in B, KB, MB, GB (and KiB…), with or without /s, case-blind", () => {
    expect(parseByteRate("5MB/s", "--x")).toBe(5 * 1024 * 1024);
    expect(parseByteRate("800 KB/s", "--x")).toBe(800 * 1024);
    expect(parseByteRate("1.5GiB/s", "--x")).toBe(1.5 * 1024 ** 3);
    expect(parseByteRate("250000", "--x")).toBe(250_000);
    expect(parseByteRate("64kb", "--x")).toBe(64 * 1024);
    expect(parseByteRate("10 b / s", "--x")).toBe(10);
  });

  it("refuses anything else, naming the flag", () => {
    for (const bad of ["", "fast", "0MB/s", "-5MB/s", "5TB/s", "5 MB per s", "5ib", "1e9"]) {
      expect(() => parseByteRate(bad, "--max-bandwidth")).toThrow(
        `--max-bandwidth must be a positive rate such as 5MB/s, 800KB/s or 250000 (bytes per second), got "${bad}"`,
      );
    }
  });
});
