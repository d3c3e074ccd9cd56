import { describe, expect, it } from "vitest";
import { type LoopLoad, PageTurns, TurnGovernor } from "../../src/frontier/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** Holds `n` turns of `turns` (so the interval's peak is n). */
async function hold(turns: PageTurns, n: number): Promise<Array<() => void>> {
  const held: Array<() => void> = [];
  for (let i = 0; i < n; i++) held.push(await turns.acquire(1));
  return held;
}

function setUp(limit = 512, floor = 4) {
  const clock = new ManualClock();
  const turns = new PageTurns(limit);
  const loads: LoopLoad[] = [];
  const governor = new TurnGovernor(
    { turns, clock, loop: () => loads.shift() ?? { delayMs: 0, utilization: 0 } },
    { floor, ceiling: limit, intervalMs: 500 },
  );
  return { clock, turns, loads, governor };
}

const SATURATED: LoopLoad = { delayMs: 6, utilization: 0.97 };
const IDLE: LoopLoad = { delayMs: 0.2, utilization: 0.3 };

describe("TurnGovernor", () => {
  it("cuts the turns to 3/4 of the most used while the loop is busy and slow, down to the floor", async () => {
    const { turns, governor } = setUp();
    const held = await hold(turns, 200);
    governor.adjust(SATURATED);
    expect(turns.limit).toBe(150);
    // The 200 turns were still held as the next interval began: they count in it.
    for (const release of held) release();
    await hold(turns, 40);
    governor.adjust(SATURATED);
    expect(turns.limit).toBe(112);
    governor.adjust(SATURATED);
    expect(turns.limit).toBe(30);
    for (let i = 0; i < 20; i++) governor.adjust(SATURATED);
    expect(turns.limit).toBe(4);
  });

  it("keeps its turns when the loop waits for other processes while it mostly waits for the network", async () => {
    const { turns, governor } = setUp();
    await hold(turns, 200);
    governor.adjust({ delayMs: 9, utilization: 0.3 });
    expect(turns.limit).toBe(512);
  });

  it("grows the turns back, by a quarter or the floor, only when they were all in use and the loop has room", async () => {
    const { turns, governor } = setUp(64, 4);
    turns.setLimit(8);
    governor.adjust(IDLE);
    // Not all in use: nothing to grow for.
    expect(turns.limit).toBe(8);
    const held = await hold(turns, 8);
    governor.adjust(IDLE);
    expect(turns.limit).toBe(12);
    await hold(turns, 4);
    governor.adjust({ delayMs: 1.5, utilization: 0.5 });
    expect(turns.limit).toBe(16);
    // A loop busy and just at the target delay holds still.
    await hold(turns, 4);
    governor.adjust({ delayMs: 1.5, utilization: 0.9 });
    expect(turns.limit).toBe(16);
    for (const release of held) release();
    for (let i = 0; i < 30; i++) {
      await hold(turns, turns.limit - turns.inUse);
      governor.adjust(IDLE);
    }
    expect(turns.limit).toBe(64);
  });

  it("reads the loop every interval once started, and keeps the limit under a lowered ceiling", async () => {
    const { clock, turns, loads, governor } = setUp(512);
    await hold(turns, 100);
    loads.push({ delayMs: 0, utilization: 0 }, SATURATED, SATURATED);
    governor.start();
    clock.advance(499);
    expect(turns.limit).toBe(512);
    clock.advance(1);
    expect(turns.limit).toBe(75);
    clock.advance(500);
    expect(turns.limit).toBe(56);
    governor.stop();
    loads.push(SATURATED);
    clock.advance(5_000);
    expect(turns.limit).toBe(56);
    governor.setCeiling(20);
    expect(turns.limit).toBe(20);
  });
});
