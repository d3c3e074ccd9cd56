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

describe("clusterTotals' busiest addresses", () => {
  const [sample] = STATS.busiestIps;
  if (!sample) throw new Error("STATS lists a busy address");
  const busy = (ip: string, figures: Partial<typeof sample>) => ({ ...sample, ip, ...figures });

  it("merges an address several agents crawl hosts at: their figures summed, the keeper as it says, the worst back-off", () => {
    const a = {
      ...STATS,
      status: "ALIVE" as const,
      id: "agent-a",
      busiestIps: [
        busy("127.2.0.1", {
          keeper: "agent-b",
          hosts: 2,
          hostNames: ["a1.test", "a2.test"],
          inFlight: 1,
          waiting: 3,
          startedRecently: 10,
          meanWaitMsRecently: 100,
          maxWaitMsRecently: 400,
          line: 2,
          blockedForMs: 0,
        }),
      ],
    };
    const b = {
      ...STATS,
      status: "ALIVE" as const,
      id: "agent-b",
      busiestIps: [
        busy("127.2.0.1", {
          keeper: "agent-b",
          hosts: 3,
          hostNames: ["b1.test", "b2.test", "b3.test"],
          inFlight: 1,
          waiting: 0,
          startedRecently: 30,
          meanWaitMsRecently: 20,
          maxWaitMsRecently: 90,
          line: 5,
          blockedForMs: 700,
        }),
        busy("127.2.0.9", { keeper: "agent-a", startedRecently: 1, inFlight: 0, waiting: 0 }),
      ],
    };
    // An agent that could not be asked is busy nowhere now.
    const gone = {
      ...STATS,
      status: "SUSPECTED" as const,
      id: "agent-c",
      busiestIps: [busy("127.2.0.5", {})],
    };
    const totals = clusterTotals([b, gone, a]);
    expect(totals.busiestIps.map((entry) => entry.ip)).toEqual(["127.2.0.1", "127.2.0.9"]);
    expect(totals.busiestIps[0]).toMatchObject({
      agents: ["agent-a", "agent-b"],
      keeper: "agent-b",
      hosts: 5,
      hostNames: ["a1.test", "a2.test", "b1.test"],
      inFlight: 2,
      waiting: 3,
      startedRecently: 40,
      meanWaitMsRecently: 40, // (10 × 100 + 30 × 20) / 40
      maxWaitMsRecently: 400,
      line: 5,
      blockedForMs: 700,
    });
    expect(JSON.stringify(totals)).toBe(JSON.stringify(clusterTotals([a, gone, b])));
  });

  it("takes the keeper most agents name when the keeper does not list the address", () => {
    const agent = (id: string, keeper: string) => ({
      ...STATS,
      status: "ALIVE" as const,
      id,
      busiestIps: [busy("127.2.0.1", { keeper })],
    });
    const totals = clusterTotals([agent("a", "k2"), agent("b", "k1"), agent("c", "k2")]);
    expect(totals.busiestIps[0]?.keeper).toBe("k2");
  });
});
