import { describe, expect, it } from "vitest";
import { clusterTotals } from "../../src/cluster/cluster-totals.js";
import { STATS } from "../transport/helpers.js";

describe("clusterTotals", () => {
  it("sums the errors of every agent, by name in the same order whichever agent listed them first", () => {
    const a = { ...STATS, id: "agent-a", errors: { http_4xx: 23, UBI_ERR_DNS_NOT_FOUND: 1 } };
    const b = { ...STATS, id: "agent-b", errors: { UBI_ERR_DNS_NOT_FOUND: 2, UBI_ERR_BODY_TIMEOUT: 1 } };
    const one = clusterTotals([a, b]);
    const other = clusterTotals([b, a]);
    expect(one.errors).toEqual({ UBI_ERR_BODY_TIMEOUT: 1, UBI_ERR_DNS_NOT_FOUND: 3, http_4xx: 23 });
    expect(JSON.stringify(one)).toBe(JSON.stringify(other));
  });
});
