import { describe, expect, it } from "vitest";
import { FixedPolicy, validateRecrawlOptions } from "../../src/recrawl/index.js";

describe("FixedPolicy", () => {
  it("gives every page the interval", () => {
    expect(new FixedPolicy(2000).nextIntervalMs()).toBe(2000);
  });
});

describe("validateRecrawlOptions", () => {
  const options = { mode: "fixed", intervalMs: 1000 } as const;

  it("accepts sound options and refuses an empty interval or horizon", () => {
    expect(() => validateRecrawlOptions(options)).not.toThrow();
    expect(() => validateRecrawlOptions({ ...options, intervalMs: 0 })).toThrow(/--recrawl-interval/);
    expect(() => validateRecrawlOptions({ ...options, horizonMs: 0 })).toThrow(/--recrawl-horizon/);
  });
});
