import { describe, expect, it } from "vitest";
import { formatInstant, parseInstant } from "../../src/flags/index.js";

describe("instants (--recrawl-until)", () => {
  it("reads ISO 8601 dates and times with their offset from UTC, seconds and fractions optional", () => {
    expect(parseInstant("2026-12-24T18:00:00Z", "--x")).toBe(Date.UTC(2026, 11, 24, 18));
    expect(parseInstant("2026-12-24T18:00Z", "--x")).toBe(Date.UTC(2026, 11, 24, 18));
    expect(parseInstant("2026-12-24T19:00:00+01:00", "--x")).toBe(Date.UTC(2026, 11, 24, 18));
    expect(parseInstant("2026-12-24T13:30:00.250-04:30", "--x")).toBe(Date.UTC(2026, 11, 24, 18, 0, 0, 250));
    // Past midnight in UTC, the day before where it was written: the date checked is the written one.
    expect(parseInstant("2026-03-01T00:30:00+02:00", "--x")).toBe(Date.UTC(2026, 1, 28, 22, 30));
    expect(parseInstant(" 2026-12-24t18:00:00z ", "--x")).toBe(Date.UTC(2026, 11, 24, 18));
  });

  it("refuses a time without its offset (a different instant on each machine), a date that does not exist, and anything else, naming the flag", () => {
    for (const bad of [
      "2026-12-24T18:00:00",
      "2026-12-24",
      "2026-02-30T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-12-24T25:00:00Z",
      "tomorrow",
      "1796311031554",
      "",
    ]) {
      expect(() => parseInstant(bad, "--recrawl-until"), bad).toThrow(
        /--recrawl-until must be a date and time/,
      );
    }
  });

  it("writes an instant so that it reads back the same", () => {
    const instant = Date.UTC(2026, 11, 24, 18, 0, 0, 250);
    expect(formatInstant(instant)).toBe("2026-12-24T18:00:00.250Z");
    expect(parseInstant(formatInstant(instant), "--x")).toBe(instant);
  });
});
