import { describe, expect, it } from "vitest";
import { fromPageSchedules, toPageSchedule } from "../../src/cluster/page-schedule-wire.js";
import { regularHistory } from "../support/page-histories.js";

describe("page histories on the wire (HostHandOver.pages)", () => {
  it("carry a sitemap's changefreq with the host, and none as the empty string", () => {
    const hinted = regularHistory(2, 0, 60_000, { changefreq: "hourly", nextAtMs: 3_600_000 });
    expect(toPageSchedule(hinted).changefreq).toBe("hourly");
    expect(fromPageSchedules("a.test", [toPageSchedule(hinted)])).toEqual([hinted]);
    const plain = regularHistory(1, 0, 0);
    expect(toPageSchedule(plain).changefreq).toBe("");
    expect(fromPageSchedules("a.test", [toPageSchedule(plain)])).toEqual([plain]);
  });
});
