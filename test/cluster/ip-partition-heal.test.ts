import { describe, expect, it } from "vitest";
import { IP_POLL_MS, IpAuthority } from "../../src/cluster/ip-authority.js";
import { returnedAuthorityOf } from "../../src/cluster/ip-hand-over.js";
import { Assignment } from "../../src/hashing/index.js";
import { ManualClock } from "../support/manual-clock.js";
import { IP, leaseReleased, OPTIONS } from "./ip-authority-fixtures.js";

/**
 * A partition cut a cluster of `near` and `far` in two; each side's authority of `IP` granted there.
 * `near` keeps `IP` after the heal; `healNear(returnedOf)` changes its view back to both. `far`'s view
 * heals first or later (`healFar`).
 */
function partitioned() {
  const clock = new ManualClock();
  const owner = { near: "near", far: "far" } as Record<string, string>;
  const asked: string[] = [];
  const make = (id: "near" | "far"): IpAuthority =>
    new IpAuthority(OPTIONS, {
      clock,
      owns: () => owner[id] === id,
      authorityOf: () => owner[id] as string,
      isAlive: () => true,
      takeOver: async (from, ip) => {
        asked.push(`${id} asks ${from}`);
        return authorities[from as "near" | "far"].handOver(ip, id);
      },
      random: () => 0,
    });
  const authorities = { near: make("near"), far: make("far") };
  const healNear = () =>
    authorities.near.viewChanged(
      () => undefined,
      ["near"],
      ["far", "near"],
      () => "far",
    );
  const healFar = () => {
    owner.far = "near";
    authorities.far.viewChanged(
      () => undefined,
      ["far"],
      ["far", "near"],
      () => "near",
    );
  };
  return { clock, asked, ...authorities, healNear, healFar };
}

describe("a healed partition", () => {
  it("asks the other side's authority of an address it kept what it granted there, which counts from its answer on", async () => {
    const { asked, near, far, healNear } = partitioned();
    // Each side leased the address to one of its agents.
    expect(near.ask("a", IP, false).kind).toBe("lease");
    expect(far.ask("x", IP, false).kind).toBe("lease");
    healNear();
    expect(asked).toEqual(["near asks far"]);
    await Promise.resolve();
    // x's lease there counts (the limit until x gives back what did not start), on top of a's.
    expect(near.inFlight(IP)).toBe(4);
    expect(near.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
    // The other side grants nothing there any more.
    expect(far.ask("y", IP, false).kind).toBe("wait");
  });

  it("asks the other side's authority of an address it takes up after the heal too, holding nothing meanwhile", async () => {
    const { asked, far, near, healNear } = partitioned();
    expect(far.ask("x", IP, false).kind).toBe("lease");
    healNear();
    // Fresh here: asked at its first ask, which is answered at once (both sides granted all along).
    expect(asked).toEqual([]);
    expect(near.ask("b", IP, false).kind).toBe("lease");
    expect(asked).toEqual(["near asks far"]);
    await Promise.resolve();
    // b's lease and x's from the other side: nobody else gets a slot there until they end.
    expect(near.inFlight(IP)).toBe(4);
    expect(near.ask("c", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
    expect(far.ask("y", IP, false).kind).toBe("wait");
  });

  it("counts nothing more where the other side, its view healed first, had nothing running", async () => {
    const { asked, far, near, healFar, healNear } = partitioned();
    const lease = far.ask("x", IP, false);
    expect(lease.kind).toBe("lease");
    far.release("x", IP, leaseReleased(lease, 2));
    healFar();
    healNear();
    expect(near.ask("b", IP, false).kind).toBe("lease");
    await Promise.resolve();
    // The far side kept its ledger for the next authority, and answers it: nothing runs there.
    expect(asked).toEqual(["near asks far"]);
    expect(near.inFlight(IP)).toBe(2);
  });

  it("hands an address it kept back to its authority, whose own view never changed, which counts what was granted there once", async () => {
    const { asked, clock, far, near, healFar, healNear } = partitioned();
    // Only far took near for dead (near's view never changed): both granted at the address.
    expect(near.ask("a", IP, false).kind).toBe("lease");
    const lease = far.ask("x", IP, false);
    expect(lease.kind).toBe("lease");
    healFar();
    const handedBack = far.handBack(["near"]);
    expect([...handedBack.keys()]).toEqual(["near"]);
    expect(handedBack.get("near")?.get(IP)?.held).toEqual(new Map([["x", 2]]));
    // far grants nothing there any more; nothing else of its is handed back.
    expect(far.ask("y", IP, false).kind).toBe("wait");
    expect(far.handBack(["near"]).size).toBe(0);
    near.handedBack("far", handedBack.get("near") ?? new Map());
    // x's lease counts on top of a's, until x gives it back (sent on by far, which keeps it no more).
    expect(near.inFlight(IP)).toBe(4);
    expect(near.ask("b", IP, false)).toEqual({ kind: "wait", waitMs: IP_POLL_MS });
    // Counted once: handed back again, or asked for by a view that changed here too, it adds nothing.
    near.handedBack("far", handedBack.get("near") ?? new Map());
    healNear();
    await Promise.resolve();
    expect(asked).toEqual(["near asks far"]);
    expect(near.inFlight(IP)).toBe(4);
    near.release("x", IP, leaseReleased(lease, 2));
    expect(near.inFlight(IP)).toBe(2);
    // A grace later, what far grants there is learnt again (another suspicion, another heal).
    clock.advance(OPTIONS.graceMs);
    expect(near.inFlight(IP)).toBe(0);
  });

  it("asks again an agent back that did not answer, and holds nothing meanwhile", async () => {
    const clock = new ManualClock();
    let answers = 0;
    const near = new IpAuthority(OPTIONS, {
      clock,
      owns: () => true,
      isAlive: () => true,
      takeOver: async () =>
        answers++ === 0
          ? undefined
          : { held: new Map([["x", 1]]), untilMs: 1_000, blockedForMs: 0, spacedForMs: 0, holdForMs: 20_000 },
      random: () => 0,
    });
    const lease = near.ask("a", IP, false);
    expect(lease.kind).toBe("lease");
    near.release("a", IP, leaseReleased(lease, 2));
    near.viewChanged(
      () => undefined,
      ["near"],
      ["far", "near"],
      () => "far",
    );
    await Promise.resolve();
    expect(answers).toBe(1);
    clock.advance(500);
    await Promise.resolve();
    expect(answers).toBe(2);
    // x's request counts; the hold the answer names for its own doubts does not hold this side.
    expect(near.inFlight(IP)).toBe(1);
    expect(near.ask("b", IP, false).kind).toBe("slot");
  });
});

describe("returnedAuthorityOf", () => {
  const view = (...ids: string[]) => Assignment.load(ids.map((id) => ({ id })));
  const ips = Array.from({ length: 300 }, (_, i) => `127.2.${i >> 8}.${i & 255}`);

  it("names each address's owner in a view of the returned agents alone", async () => {
    const [after, farSide] = await Promise.all([view("a", "b", "c", "d"), view("c", "d")]);
    const returnedOf = returnedAuthorityOf("a", after, ["c", "d"]);
    for (const ip of ips) expect(returnedOf?.(ip)).toBe(farSide.ownerOfRareKey(ip));
  });

  it("names none when no agent came back", async () => {
    expect(returnedAuthorityOf("a", await view("a", "b"), [])).toBeUndefined();
  });
});
