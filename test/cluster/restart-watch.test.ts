import { expect, it } from "vitest";
import { RESTART_INCARNATION_STEP, RestartWatch } from "../../src/cluster/restart-watch.js";
import { Assignment } from "../../src/hashing/index.js";

const view = (...ids: string[]) => Assignment.load(ids.map((id) => ({ id })));

/** A watch over agents whose incarnations and leaves the test sets. */
function watch() {
  const incarnations = new Map<string, number>();
  const left = new Set<string>();
  const restartWatch = new RestartWatch({
    incarnationOf: (id) => incarnations.get(id),
    hasLeft: (id) => left.has(id),
  });
  return { incarnations, left, restartWatch };
}

it("names an agent back as a new process, not one back after a refuted suspicion", async () => {
  const [all, withoutB] = await Promise.all([view("a", "b", "c"), view("a", "c")]);
  const { incarnations, restartWatch } = watch();
  incarnations.set("b", 1_700_000_000_000);
  expect(restartWatch.viewChanged(all, withoutB).restarted).toEqual([]);
  // Suspected wrongly, it outbids the suspicion by one: the same process, its requests still running.
  incarnations.set("b", 1_700_000_000_001);
  expect(restartWatch.viewChanged(withoutB, all).restarted).toEqual([]);
  // Gone again, then back restarted: its start time, its predecessor's lifetime later.
  expect(restartWatch.viewChanged(all, withoutB).restarted).toEqual([]);
  incarnations.set("b", 1_700_000_000_001 + RESTART_INCARNATION_STEP + 5_000);
  expect(restartWatch.viewChanged(withoutB, all).restarted).toEqual(["b"]);
  // Told once: back in the view since, it is no restart again.
  expect(restartWatch.viewChanged(all, all).restarted).toEqual([]);
});

it("does not remember an agent that left on purpose, nor one whose incarnation it never knew", async () => {
  const [all, withoutB] = await Promise.all([view("a", "b", "c"), view("a", "c")]);
  const { incarnations, left, restartWatch } = watch();
  left.add("b");
  incarnations.set("b", 1_000);
  restartWatch.viewChanged(all, withoutB);
  incarnations.set("b", 1_000_000);
  expect(restartWatch.viewChanged(withoutB, all).restarted).toEqual([]);
  incarnations.delete("c");
  const withoutC = await view("a", "b");
  restartWatch.viewChanged(all, withoutC);
  incarnations.set("c", 1_000_000);
  expect(restartWatch.viewChanged(withoutC, all).restarted).toEqual([]);
});

it("names an agent back in the view as the same life (a refuted suspicion, a healed partition) as returned", async () => {
  const [all, withoutB] = await Promise.all([view("a", "b", "c"), view("a", "c")]);
  const { incarnations, left, restartWatch } = watch();
  incarnations.set("b", 1_700_000_000_000);
  restartWatch.viewChanged(all, withoutB);
  incarnations.set("b", 1_700_000_000_001);
  expect(restartWatch.viewChanged(withoutB, all)).toEqual({ restarted: [], returned: ["b"] });
  // Told once.
  expect(restartWatch.viewChanged(all, all)).toEqual({ restarted: [], returned: [] });
  // Restarted, it is no returner: its previous life's grants ended with it.
  restartWatch.viewChanged(all, withoutB);
  incarnations.set("b", 1_700_000_000_001 + RESTART_INCARNATION_STEP + 5_000);
  expect(restartWatch.viewChanged(withoutB, all)).toEqual({ restarted: ["b"], returned: [] });
  // Nor is an agent that left on purpose and came back.
  left.add("b");
  restartWatch.viewChanged(all, withoutB);
  left.delete("b");
  expect(restartWatch.viewChanged(withoutB, all)).toEqual({ restarted: [], returned: [] });
});
