import { expect, it } from "vitest";
import { HandsChanges, pausedOrHandedOver } from "../../src/agent/hands-changes.js";

/**
 * Who may fetch which host changes (a view change, a host's crawl passed on): each wait of a URL looks
 * at each change whether its host is still this agent's, and ends when it is not.
 */

it("aborts a watch at the first change that finds its host handed over, and at once if it is already", () => {
  const hands = new HandsChanges();
  let mine = true;
  let looks = 0;
  const watch = hands.watch(() => {
    looks++;
    return mine;
  });
  expect(watch.signal.aborted).toBe(false);
  hands.changed();
  hands.changed();
  expect(watch.signal.aborted).toBe(false);
  expect(looks).toBe(3);
  mine = false;
  hands.changed();
  expect(watch.signal.aborted).toBe(true);
  hands.changed();
  expect(looks).toBe(4);
  expect(hands.watch(() => false).signal.aborted).toBe(true);
});

it("stops looking once disposed", () => {
  const hands = new HandsChanges();
  let looks = 0;
  const watch = hands.watch(() => {
    looks++;
    return false;
  });
  expect(looks).toBe(1);
  const kept = hands.watch(() => {
    looks++;
    return true;
  });
  kept.dispose();
  hands.changed();
  expect(looks).toBe(2);
  expect(watch.signal.aborted).toBe(true);
});

it("ends a wait at a pause or at the hand-over, whichever comes first", () => {
  const hands = new HandsChanges();
  let mine = true;
  const pause = new AbortController();
  const either = pausedOrHandedOver(
    pause.signal,
    hands.watch(() => mine),
  );
  expect(either.signal?.aborted).toBe(false);
  mine = false;
  hands.changed();
  expect(either.signal?.aborted).toBe(true);
  either.dispose();
  const paused = pausedOrHandedOver(
    pause.signal,
    hands.watch(() => true),
  );
  pause.abort();
  expect(paused.signal?.aborted).toBe(true);
  expect(pausedOrHandedOver(undefined, undefined).signal).toBeUndefined();
  const alone = new AbortController().signal;
  expect(pausedOrHandedOver(alone, undefined).signal).toBe(alone);
});
