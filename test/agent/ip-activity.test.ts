import { describe, expect, it } from "vitest";
import { IpActivity, type IpActivityOptions } from "../../src/agent/ip-activity.js";
import { trackedIpLimiter } from "../../src/agent/tracked-ip-limiter.js";
import { IpGate, type IpPoliteness, IpSpacing } from "../../src/frontier/index.js";
import { flush } from "../frontier/helpers.js";
import { ManualClock } from "../support/manual-clock.js";

/** The recent window's step, as documented ("the figures are kept in 10 s steps"). */
const STEP_MS = 10_000;

/** An activity on a manual clock whose politeness is set by the test, per address. */
function setUp(options: IpActivityOptions = {}) {
  const clock = new ManualClock(0);
  const politeness = new Map<string, IpPoliteness>();
  const activity = new IpActivity(options, {
    clock,
    politenessAt: (ip) => politeness.get(ip) ?? { line: 0, blockedUntilMs: 0, delayMs: 0 },
  });
  return { clock, politeness, activity };
}

describe("IpActivity", () => {
  it("counts an address's requests waiting, in flight and started, and how long they waited", () => {
    const { clock, activity } = setUp();
    const first = activity.waits("127.2.0.1", "a.test");
    const second = activity.waits("127.2.0.1", "b.test");
    expect(activity.busiest(10)[0]).toMatchObject({ waiting: 2, inFlight: 0, started: 0 });
    clock.advance(100);
    const endFirst = first.started();
    clock.advance(300);
    const endSecond = second.started();
    expect(activity.busiest(10)).toEqual([
      {
        ip: "127.2.0.1",
        hosts: 2,
        moreHosts: false,
        hostNames: ["a.test", "b.test"],
        inFlight: 2,
        waiting: 0,
        startedRecently: 2,
        started: 2,
        meanWaitMsRecently: 250,
        maxWaitMsRecently: 400,
        waitedMs: 500,
        refusalsRecently: 0,
        refusals: 0,
        line: 0,
        blockedForMs: 0,
        delayMs: 0,
      },
    ]);
    endFirst();
    endFirst(); // a second call changes nothing
    endSecond();
    expect(activity.busiest(10)[0]).toMatchObject({ inFlight: 0, started: 2 });
  });

  it("forgets a request that gave up waiting", () => {
    const { activity } = setUp();
    activity.waits("127.2.0.1", "a.test").gaveUp();
    expect(activity.busiest(10)).toEqual([]);
    expect(activity.size).toBe(1);
  });

  it("keeps the recent figures for the last minute in 10 s steps, the totals for as long as it remembers", () => {
    const { clock, activity } = setUp();
    clock.advance(5 * STEP_MS); // the start of a step
    activity.waits("127.2.0.1", "a.test").started()();
    clock.advance(2 * STEP_MS);
    const late = activity.waits("127.2.0.1", "a.test");
    clock.advance(1_000);
    late.started()();
    activity.refused("127.2.0.1");
    expect(activity.busiest(10)[0]).toMatchObject({
      startedRecently: 2,
      meanWaitMsRecently: 500,
      maxWaitMsRecently: 1_000,
      refusalsRecently: 1,
    });
    // Six steps after the first request's, it is out of the window; the second's step is still in.
    clock.advance(4 * STEP_MS - 1_000);
    expect(activity.busiest(10)[0]).toMatchObject({
      startedRecently: 1,
      started: 2,
      meanWaitMsRecently: 1_000,
      waitedMs: 1_000,
      refusals: 1,
    });
    // Nothing in the last minute: not among the busiest, though remembered.
    clock.advance(2 * STEP_MS);
    expect(activity.busiest(10)).toEqual([]);
    expect(activity.size).toBe(1);
  });

  it("ranks by requests started lately plus those in flight and waiting, then by the longest recent wait", () => {
    const { clock, activity } = setUp();
    for (let i = 0; i < 3; i++) activity.waits("127.2.0.1", "a.test").started()();
    activity.waits("127.2.0.2", "b.test").started();
    activity.waits("127.2.0.2", "b.test");
    const slow = activity.waits("127.2.0.3", "c.test");
    clock.advance(2_000);
    slow.started()();
    activity.waits("127.2.0.4", "d.test").started()();
    // 3 started; 1 in flight + 1 started + 1 waiting; 1 started after 2 s; 1 started at once.
    expect(activity.busiest(10).map((entry) => entry.ip)).toEqual([
      "127.2.0.1",
      "127.2.0.2",
      "127.2.0.3",
      "127.2.0.4",
    ]);
    expect(activity.busiest(2).map((entry) => entry.ip)).toEqual(["127.2.0.1", "127.2.0.2"]);
  });

  it("asks the limiter about the addresses it reports only", () => {
    const clock = new ManualClock(0);
    const asked: string[] = [];
    const activity = new IpActivity(
      {},
      {
        clock,
        politenessAt: (ip) => {
          asked.push(ip);
          return { line: 0, blockedUntilMs: 0, delayMs: 0 };
        },
      },
    );
    for (let i = 1; i <= 5; i++)
      for (let n = 0; n < i; n++) activity.waits(`127.2.0.${i}`, "a.test").started()();
    expect(activity.busiest(2).map((entry) => entry.ip)).toEqual(["127.2.0.5", "127.2.0.4"]);
    expect(asked).toEqual(["127.2.0.5", "127.2.0.4"]);
  });

  it("remembers the addresses used most recently up to its bound, and a forgotten one's request does not bring it back", () => {
    const { activity } = setUp({ maxIps: 2 });
    const running = activity.waits("127.2.0.1", "a.test").started();
    activity.waits("127.2.0.2", "b.test").started()();
    activity.waits("127.2.0.3", "c.test").started()();
    expect(activity.size).toBe(2);
    running();
    expect(activity.busiest(10).map((entry) => entry.ip)).toEqual(["127.2.0.2", "127.2.0.3"]);
    // Used again, an address is the most recent: the least recent goes.
    activity.waits("127.2.0.2", "b.test").started()();
    activity.waits("127.2.0.4", "d.test").started()();
    expect(activity.busiest(10).map((entry) => entry.ip)).toEqual(["127.2.0.2", "127.2.0.4"]);
  });

  it("counts hosts up to its bound and lists the first three", () => {
    const { activity } = setUp({ maxHostsPerIp: 4 });
    for (const host of ["a.test", "b.test", "a.test", "c.test:8080", "d.test", "e.test", "f.test"])
      activity.waits("127.2.0.1", host).started()();
    expect(activity.busiest(1)[0]).toMatchObject({
      hosts: 4,
      moreHosts: true,
      hostNames: ["a.test", "b.test", "c.test:8080"],
    });
  });

  it("adds what the limiter knows of the address's politeness: keeper, line, the block left and the delay", () => {
    const { clock, politeness, activity } = setUp();
    activity.waits("127.2.0.1", "a.test");
    politeness.set("127.2.0.1", {
      keeper: "agent-2",
      line: 3,
      blockedUntilMs: clock.now() + 1_500,
      delayMs: 200,
    });
    clock.advance(500);
    expect(activity.busiest(1)[0]).toMatchObject({
      keeper: "agent-2",
      line: 3,
      blockedForMs: 1_000,
      delayMs: 200,
    });
    clock.advance(2_000);
    expect(activity.busiest(1)[0]).toMatchObject({ blockedForMs: 0 });
  });

  it("refuses bounds that are not positive integers, naming them", () => {
    const clock = new ManualClock(0);
    const politenessAt = () => ({ line: 0, blockedUntilMs: 0, delayMs: 0 });
    expect(() => new IpActivity({ maxIps: 0 }, { clock, politenessAt })).toThrow(/maxIps/);
    expect(() => new IpActivity({ maxHostsPerIp: 1.5 }, { clock, politenessAt })).toThrow(/maxHostsPerIp/);
  });
});

describe("trackedIpLimiter", () => {
  it("tells the activity how long a request waited for a lone agent's slot, and its line meanwhile", async () => {
    const clock = new ManualClock(0);
    const gate = new IpGate(1, { spacing: new IpSpacing(0, clock) });
    const activity = new IpActivity({}, { clock, politenessAt: (ip) => gate.politenessAt(ip) });
    const limiter = trackedIpLimiter(gate, activity);
    const releaseFirst = await limiter.acquire("127.2.0.1", undefined, "a.test");
    let releaseSecond: (() => void) | undefined;
    void limiter.acquire("127.2.0.1", undefined, "b.test").then((release) => {
      releaseSecond = release;
    });
    await flush();
    expect(activity.busiest(1)[0]).toMatchObject({ inFlight: 1, waiting: 1, line: 1, hosts: 2 });
    clock.advance(700);
    releaseFirst();
    await flush();
    expect(activity.busiest(1)[0]).toMatchObject({
      inFlight: 1,
      waiting: 0,
      line: 0,
      maxWaitMsRecently: 700,
    });
    releaseSecond?.();
    limiter.refused("127.2.0.1", 1_000);
    expect(activity.busiest(1)[0]).toMatchObject({ inFlight: 0, started: 2, refusals: 1, waitedMs: 700 });
  });

  it("counts a request aborted while it waits as given up", async () => {
    const clock = new ManualClock(0);
    const gate = new IpGate(1);
    const activity = new IpActivity({}, { clock, politenessAt: (ip) => gate.politenessAt(ip) });
    const limiter = trackedIpLimiter(gate, activity);
    const release = await limiter.acquire("127.2.0.1", undefined, "a.test");
    const abort = new AbortController();
    const waiting = limiter.acquire("127.2.0.1", abort.signal, "a.test");
    abort.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
    expect(activity.busiest(1)[0]).toMatchObject({ inFlight: 1, waiting: 0, started: 1 });
    release();
  });
});
