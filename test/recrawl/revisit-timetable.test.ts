import { describe, expect, it } from "vitest";
import { type PlannedRevisit, RevisitTimetable } from "../../src/recrawl/revisit-timetable.js";
import { ManualClock } from "../support/manual-clock.js";

/** A timetable on a manual clock, taking its due plans (their hosts) each time its timer fires. */
function timetable() {
  const clock = new ManualClock(0);
  const taken: string[][] = [];
  const table: RevisitTimetable = new RevisitTimetable(clock, () => {
    taken.push(table.takeDue().map((plan) => plan.host));
    table.arm();
  });
  return { clock, table, taken };
}

describe("RevisitTimetable", () => {
  it("fires once for the earliest plan and hands out what is due then, in order of their times", () => {
    const { clock, table, taken } = timetable();
    table.add(3000, "c", 3n);
    table.add(1000, "a", 1n);
    table.add(1000, "b", 2n);
    table.arm();
    table.arm();
    expect(clock.pendingDelays).toEqual([1000]);
    clock.advance(999);
    expect(taken).toEqual([]);
    clock.advance(1);
    expect(taken.map((hosts) => hosts.sort())).toEqual([["a", "b"]]);
    expect(table.length).toBe(1);
    expect(clock.pendingDelays).toEqual([2000]);
    clock.advance(2000);
    expect(taken.at(-1)).toEqual(["c"]);
    expect(clock.pending).toBe(0);
  });

  it("moves its timer sooner when an earlier plan comes, and says how late the earliest is", () => {
    const { clock, table } = timetable();
    table.add(5000, "late", 1n);
    table.arm();
    table.add(2000, "early", 2n);
    table.arm();
    expect(clock.pendingDelays).toEqual([2000]);
    expect(table.overdueMs()).toBe(0);
    table.stop();
    clock.advance(2500);
    expect(table.overdueMs()).toBe(500);
  });

  it("divides the wait left of each plan by its ratio, keeping its stored time, and leaves due and postponed plans as they are", () => {
    const clock = new ManualClock(0);
    const taken: PlannedRevisit[] = [];
    const table: RevisitTimetable = new RevisitTimetable(clock, () => {
      taken.push(...table.takeDue());
      table.arm();
    });
    table.add(10_000, "faster", 1n);
    table.add(10_000, "unknown", 2n);
    table.add(0, "postponed", 3n);
    table.postpone(table.takeDue()[0] as PlannedRevisit, 8000);
    table.arm();
    clock.advance(2000);
    table.rescale((plan) => (plan.host === "unknown" ? undefined : 4));
    // 8 s left of "faster" become 2; "postponed" waits for its host, "unknown" has no ratio.
    expect(clock.pendingDelays).toEqual([2000]);
    clock.advance(2000);
    expect(taken.map((plan) => [plan.host, plan.atMs, clock.now()])).toEqual([["faster", 10_000, 4000]]);
    clock.advance(6000);
    expect(taken.slice(1).map((plan) => [plan.host, plan.waitMs])).toEqual([
      ["postponed", 8000],
      ["unknown", 0],
    ]);
  });

  it("sets no timer once stopped", () => {
    const { clock, table } = timetable();
    table.add(1000, "a", 1n);
    table.arm();
    table.stop();
    expect(clock.pending).toBe(0);
    table.add(500, "b", 2n);
    table.arm();
    expect(clock.pending).toBe(0);
  });
});
