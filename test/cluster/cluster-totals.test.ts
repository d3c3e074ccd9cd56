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
      keepers: ["agent-b"],
      hosts: 5,
      hostsAtLeast: 5, // five names listed
      hostNames: ["a1.test", "a2.test", "b1.test"],
      inFlight: 2,
      waiting: 3,
      startedRecently: 40,
      meanWaitMsRecently: 40, // (10 × 100 + 30 × 20) / 40
      maxWaitMsRecently: 400,
      line: 5, // the keeper's whole line
      blockedForMs: 700,
    });
    expect(JSON.stringify(totals)).toBe(JSON.stringify(clusterTotals([a, gone, b])));
  });

  const alive = (id: string, ...busiestIps: (typeof sample)[]) => ({
    ...STATS,
    status: "ALIVE" as const,
    id,
    busiestIps,
  });

  it("takes the keeper most agents name when the keeper does not list the address, and sums their asks in its line", () => {
    const totals = clusterTotals([
      alive("a", busy("127.2.0.1", { keeper: "k2", line: 2 })),
      alive("b", busy("127.2.0.1", { keeper: "k1", line: 3 })),
      alive("c", busy("127.2.0.1", { keeper: "k2", line: 1 })),
    ]);
    expect(totals.busiestIps[0]).toMatchObject({ keepers: ["k2"], line: 6 });
  });

  it("shows each agent keeping its own under --ip-limit agent, their lines summed", () => {
    // Each agent names itself the keeper: its own line, its own slots.
    const totals = clusterTotals([
      alive("b", busy("127.2.0.1", { keeper: "b", line: 3 })),
      alive("a", busy("127.2.0.1", { keeper: "a", line: 2 })),
    ]);
    expect(totals.busiestIps[0]).toMatchObject({ agents: ["a", "b"], keepers: ["a", "b"], line: 5 });
  });

  it("gives the hosts as a range: at most the agents' counts summed, at least the most one agent counts", () => {
    // Under --partition url every agent crawls every host: the same three counted by each.
    const names = ["a.test", "b.test", "c.test"];
    const totals = clusterTotals([
      alive("a", busy("127.2.0.1", { keeper: "a", hosts: 3, hostNames: names })),
      alive("b", busy("127.2.0.1", { keeper: "a", hosts: 3, hostNames: names })),
      alive("c", busy("127.2.0.1", { keeper: "a", hosts: 2, hostNames: names.slice(1) })),
    ]);
    expect(totals.busiestIps[0]).toMatchObject({ hosts: 8, hostsAtLeast: 3, hostNames: names });
    // Distinct names listed count when they are more than any one agent's count.
    const apart = clusterTotals([
      alive("a", busy("127.2.0.1", { keeper: "a", hosts: 1, hostNames: ["a.test"] })),
      alive("b", busy("127.2.0.1", { keeper: "a", hosts: 1, hostNames: ["b.test"] })),
    ]);
    expect(apart.busiestIps[0]).toMatchObject({ hosts: 2, hostsAtLeast: 2 });
  });
});
