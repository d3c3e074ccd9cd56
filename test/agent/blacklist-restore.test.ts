import { describe, expect, it } from "vitest";
import { addRestores, describeRestore, NO_RESTORE } from "../../src/agent/blacklist-restore.js";
import { removalMessage } from "../../src/cluster/admin-service.js";

describe("what a removal from the blacklist says", () => {
  const here = { ...NO_RESTORE, hosts: 1, queuedHere: 39 };

  it("says how many URLs were queued again, and plainly what could not be and why", () => {
    expect(describeRestore(here, 10_000)).toBe("39 URLs dropped while listed queued again");
    expect(describeRestore(NO_RESTORE, 10_000)).toBe("0 URLs dropped while listed queued again");
    expect(
      describeRestore(
        { hosts: 2, queuedHere: 5, sentToOwners: 3, outOfLimits: 2, doneMeanwhile: 1, beyondCap: 40 },
        100,
      ),
    ).toBe(
      "8 URLs dropped while listed queued again (5 here, 3 sent to their hosts' owners); 1 done meanwhile, " +
        "not fetched again; 2 now beyond --max-depth or --scope, dropped; 40 cannot be restored: dropped " +
        "beyond the 100 URLs a host kept aside (give them to ctl add-seeds --force)",
    );
    expect(addRestores(here, here)).toEqual({ ...NO_RESTORE, hosts: 2, queuedHere: 78 });
  });

  it("adds the other agents' restores, and says when URLs dropped by an older version are lost", () => {
    expect(removalMessage("h.test", { restore: here, droppedBeforeKeeping: false }, NO_RESTORE, 10_000)).toBe(
      "unblacklisted h.test: 39 URLs dropped while listed queued again",
    );
    expect(
      removalMessage(
        "h.test",
        { restore: NO_RESTORE, droppedBeforeKeeping: true },
        { ...NO_RESTORE, hosts: 1, queuedHere: 12 },
        10_000,
      ),
    ).toBe(
      "unblacklisted h.test: 0 URLs dropped while listed queued again; on the other agents: 12 URLs " +
        "dropped while listed queued again; URLs dropped before this agent's state kept them aside (the " +
        "pattern is older) are not known and cannot be restored: give them to ctl add-seeds --force",
    );
  });
});
