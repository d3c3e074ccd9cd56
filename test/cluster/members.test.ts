import { describe, expect, it } from "vitest";
import { CrawlTenure } from "../../src/cluster/crawl-tenure.js";
import { fromWireMember, toWireMember } from "../../src/cluster/members.js";

describe("wire members", () => {
  it("sends a table entry with its status in wire form and how long ago it was heard", () => {
    const entry = { id: "a", address: "127.0.0.1:7", capacity: 2, incarnation: 9, lastHeardMs: 1000 };
    expect(toWireMember({ ...entry, status: "alive" }, 1500)).toStrictEqual({
      id: "a",
      address: "127.0.0.1:7",
      capacity: 2,
      incarnation: 9,
      status: "ALIVE",
      lastHeardMsAgo: 500,
    });
    expect(toWireMember({ ...entry, status: "suspected" }, 1000).status).toBe("SUSPECTED");
    expect(toWireMember({ ...entry, status: "left" }, 1000).status).toBe("LEFT");
    // A clock that went back never gives a negative age.
    expect(toWireMember({ ...entry, status: "alive" }, 400).lastHeardMsAgo).toBe(0);
  });

  it("sends a gossip entry (no local timing) as heard just now", () => {
    const gossip = { id: "b", address: "127.0.0.1:8", capacity: 1, incarnation: 3, status: "left" as const };
    expect(toWireMember(gossip, 5000)).toMatchObject({ status: "LEFT", lastHeardMsAgo: 0 });
  });

  it("reads each wire status back, dropping the wire-only age", () => {
    const wire = { id: "a", address: "127.0.0.1:7", capacity: 2, incarnation: 9, lastHeardMsAgo: 77 };
    expect(fromWireMember({ ...wire, status: "ALIVE" })).toStrictEqual({
      id: "a",
      address: "127.0.0.1:7",
      capacity: 2,
      incarnation: 9,
      status: "alive",
    });
    expect(fromWireMember({ ...wire, status: "SUSPECTED" }).status).toBe("suspected");
    expect(fromWireMember({ ...wire, status: "LEFT" }).status).toBe("left");
  });
});

describe("CrawlTenure", () => {
  it("holds taken hosts, remembers to whom it passed one, and forgets that when it takes it back", () => {
    const tenure = new CrawlTenure();
    tenure.take("a:80");
    tenure.take("b:80");
    expect(tenure.holds("a:80")).toBe(true);
    expect(tenure.heldHosts().sort()).toEqual(["a:80", "b:80"]);
    tenure.pass("a:80", "agent-2");
    expect(tenure.holds("a:80")).toBe(false);
    expect(tenure.passedTo("a:80")).toBe("agent-2");
    expect(tenure.heldHosts()).toEqual(["b:80"]);
    tenure.take("a:80");
    expect(tenure.passedTo("a:80")).toBeUndefined();
    expect(tenure.holds("a:80")).toBe(true);
    expect(tenure.passedTo("c:80")).toBeUndefined();
  });
});
