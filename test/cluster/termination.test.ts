import { describe, expect, it } from "vitest";
import { TerminationDetector, type WorkLoad } from "../../src/cluster/termination.js";
import { idle } from "../support/work-load.js";

/** Observes `loads` (by agent id) at `atMs`, then runs one round over their ids. */
function round(detector: TerminationDetector, loads: Record<string, WorkLoad>, atMs: number): boolean {
  for (const [id, load] of Object.entries(loads)) detector.observe(id, load, atMs);
  return detector.check(Object.keys(loads));
}

describe("TerminationDetector", () => {
  it("is never complete before any agent had work", () => {
    const detector = new TerminationDetector();
    const nothing = idle({ urlBatchesSent: 0, urlBatchesReceived: 0, pagesFetched: 0 });
    for (let t = 1; t <= 5; t++) expect(round(detector, { a: nothing, b: nothing }, t * 100)).toBe(false);
    // Being given seeds starts the crawl: the same idle reports now end it after two rounds.
    detector.markStarted();
    expect(round(detector, { a: nothing, b: nothing }, 600)).toBe(false);
    expect(round(detector, { a: nothing, b: nothing }, 700)).toBe(true);
  });

  it("needs two consecutive all-idle rounds with fresh reports and unchanged counters", () => {
    const detector = new TerminationDetector();
    const loads = { a: idle(), b: idle({ urlBatchesSent: 2, urlBatchesReceived: 2 }) };
    expect(round(detector, loads, 1000)).toBe(false);
    // No fresh report since the first round: not enough.
    expect(detector.check(["a", "b"])).toBe(false);
    // Only one agent reported again: b's report is still the old one.
    detector.observe("a", loads.a, 1200);
    expect(detector.check(["a", "b"])).toBe(false);
    detector.observe("b", loads.b, 1200);
    expect(detector.check(["a", "b"])).toBe(true);
  });

  it("starts over when a counter moved between the two rounds", () => {
    const detector = new TerminationDetector();
    expect(round(detector, { a: idle(), b: idle() }, 1000)).toBe(false);
    // b fetched a page between the rounds: same idle flags, different counters.
    expect(round(detector, { a: idle(), b: idle({ pagesFetched: 11 }) }, 1100)).toBe(false);
    expect(round(detector, { a: idle(), b: idle({ pagesFetched: 11 }) }, 1200)).toBe(true);
  });

  it("sees a batch in transit as a busy sender, then as a moved receiver counter", () => {
    const detector = new TerminationDetector();
    // a's batch is not acknowledged yet: a is busy, whatever b says.
    const inTransit = { a: idle({ idle: false, urlBatchesSent: 3 }), b: idle({ urlBatchesReceived: 3 }) };
    for (let t = 1; t <= 3; t++) expect(round(detector, inTransit, t * 100)).toBe(false);
    // b received it (all duplicates: it stays idle) and a got the ack: both idle, but b's counter moved
    // since b's last report, so this is only a first round.
    const delivered = { a: idle({ urlBatchesSent: 4 }), b: idle({ urlBatchesReceived: 4 }) };
    expect(round(detector, { a: idle({ urlBatchesSent: 4 }), b: idle({ urlBatchesReceived: 3 }) }, 400)).toBe(
      false,
    );
    expect(round(detector, delivered, 500)).toBe(false);
    expect(round(detector, delivered, 600)).toBe(true);
  });

  it("is blocked by one non-idle agent, and that resets the first round", () => {
    const detector = new TerminationDetector();
    expect(round(detector, { a: idle(), b: idle() }, 100)).toBe(false);
    expect(round(detector, { a: idle(), b: idle({ idle: false }) }, 200)).toBe(false);
    // The idle round before the busy one does not count: two new idle rounds are needed.
    expect(round(detector, { a: idle(), b: idle() }, 300)).toBe(false);
    expect(round(detector, { a: idle(), b: idle() }, 400)).toBe(true);
  });

  it("is blocked by a live agent it never heard from, until that agent is forgotten", () => {
    const detector = new TerminationDetector();
    detector.observe("a", idle(), 100);
    expect(detector.check(["a", "b"])).toBe(false);
    detector.observe("a", idle(), 200);
    expect(detector.check(["a", "b"])).toBe(false);
    detector.observe("b", idle({ idle: false }), 250);
    detector.forget("b");
    detector.observe("a", idle(), 300);
    expect(detector.check(["a"])).toBe(false);
    detector.observe("a", idle(), 400);
    expect(detector.check(["a"])).toBe(true);
  });
  it("does not start over when an agent leaves the view between the two rounds", () => {
    const detector = new TerminationDetector();
    expect(round(detector, { a: idle(), b: idle(), c: idle() }, 100)).toBe(false);
    // c saw the end first and left: a and b finish with the round they already had.
    detector.forget("c");
    expect(round(detector, { a: idle(), b: idle() }, 200)).toBe(true);
  });

  it("starts over when an agent joins the view, or a remaining agent's counter moved", () => {
    const joined = new TerminationDetector();
    expect(round(joined, { a: idle(), b: idle() }, 100)).toBe(false);
    expect(round(joined, { a: idle(), b: idle(), c: idle() }, 200)).toBe(false);
    expect(round(joined, { a: idle(), b: idle(), c: idle() }, 300)).toBe(true);

    // c handed its last batch to b, then left: b's received counter shows it.
    const handedOver = new TerminationDetector();
    expect(round(handedOver, { a: idle(), b: idle(), c: idle() }, 100)).toBe(false);
    handedOver.forget("c");
    expect(round(handedOver, { a: idle(), b: idle({ urlBatchesReceived: 4 }) }, 200)).toBe(false);
    expect(round(handedOver, { a: idle(), b: idle({ urlBatchesReceived: 4 }) }, 300)).toBe(true);
  });

  it("needs fresh reports from the remaining agents after an agent left", () => {
    const detector = new TerminationDetector();
    expect(round(detector, { a: idle(), b: idle(), c: idle() }, 100)).toBe(false);
    detector.forget("c");
    // b has not answered since the first round.
    detector.observe("a", idle(), 200);
    expect(detector.check(["a", "b"])).toBe(false);
    detector.observe("b", idle(), 200);
    expect(detector.check(["a", "b"])).toBe(true);
  });
  it("tells when only fresher reports are missing, and when a request says an agent went idle", () => {
    const detector = new TerminationDetector();
    expect(detector.awaitsFreshReports).toBe(false);
    expect(round(detector, { a: idle(), b: idle({ idle: false }) }, 100)).toBe(false);
    expect(detector.awaitsFreshReports).toBe(false); // b is busy: asking again now would not help
    // b's heartbeat request says it went idle (a load of unknown freshness): worth asking b now.
    expect(detector.isNewlyIdle("b", idle())).toBe(true);
    expect(detector.isNewlyIdle("b", idle({ idle: false }))).toBe(false);
    expect(detector.isNewlyIdle("a", idle())).toBe(false); // a was last observed idle already
    expect(detector.isNewlyIdle("c", idle())).toBe(true); // never observed
    expect(round(detector, { a: idle(), b: idle() }, 200)).toBe(false);
    expect(detector.awaitsFreshReports).toBe(true);
    expect(round(detector, { a: idle(), b: idle() }, 300)).toBe(true);
  });

  it("counts queued URLs alone as work, in a report and in a load of unknown freshness", () => {
    const queuedOnly = idle({ pagesFetched: 0, queuedUrls: 4 });
    const observed = new TerminationDetector();
    observed.observe("a", queuedOnly, 100);
    expect(observed.hasStarted).toBe(true);

    const noted = new TerminationDetector();
    noted.noteStarted(queuedOnly);
    expect(noted.hasStarted).toBe(true);
    const fetchedOnly = new TerminationDetector();
    fetchedOnly.noteStarted(idle({ pagesFetched: 1, queuedUrls: 0 }));
    expect(fetchedOnly.hasStarted).toBe(true);
  });

  it("latches nothing from a load without work, and knows whom it has a report from", () => {
    const detector = new TerminationDetector();
    const nothing = idle({ pagesFetched: 0, queuedUrls: 0 });
    detector.noteStarted(nothing);
    detector.observe("a", nothing, 100);
    expect(detector.hasStarted).toBe(false);
    detector.noteStarted(idle());
    expect(detector.hasStarted).toBe(true);
    expect(detector.hasReportFrom("a")).toBe(true);
    expect(detector.hasReportFrom("b")).toBe(false);
  });

  it("forgets a departed agent's report: it counts as never observed again", () => {
    const detector = new TerminationDetector();
    detector.observe("c", idle(), 100);
    expect(detector.isNewlyIdle("c", idle())).toBe(false);
    detector.forget("c");
    expect(detector.hasReportFrom("c")).toBe(false);
    expect(detector.isNewlyIdle("c", idle())).toBe(true);
  });
});
