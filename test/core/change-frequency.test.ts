import { describe, expect, it } from "vitest";
import { CHANGE_FREQUENCIES, changePeriodMs, readChangeFrequency } from "../../src/change-frequency.js";

describe("readChangeFrequency", () => {
  it("reads sitemaps.org's values, blanks around them and letter case aside", () => {
    for (const value of CHANGE_FREQUENCIES) expect(readChangeFrequency(value)).toBe(value);
    expect(readChangeFrequency(" Weekly\n")).toBe("weekly");
    expect(readChangeFrequency("HOURLY")).toBe("hourly");
  });

  it("names none for anything else", () => {
    for (const text of ["", "  ", "sometimes", "1h", "day", "dai ly", "always,never", "constructor"])
      expect(readChangeFrequency(text)).toBeUndefined();
  });
});

describe("changePeriodMs", () => {
  it("grows from always (0) to never (infinite)", () => {
    const periods = CHANGE_FREQUENCIES.map(changePeriodMs);
    expect(periods[0]).toBe(0);
    expect(changePeriodMs("hourly")).toBe(3_600_000);
    expect(changePeriodMs("daily")).toBe(86_400_000);
    expect(changePeriodMs("never")).toBe(Number.POSITIVE_INFINITY);
    for (let i = 1; i < periods.length; i++) expect(periods[i]).toBeGreaterThan(periods[i - 1] as number);
  });
});
