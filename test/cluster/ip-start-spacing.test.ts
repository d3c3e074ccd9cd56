import { expect, it } from "vitest";
import { IP_START_SLACK_MS } from "../../src/cluster/ip-grant.js";
import { IpStartSpacing } from "../../src/cluster/ip-start-spacing.js";

it("spaces nothing without a delay, and grants leave nothing to undo", () => {
  const spacing = new IpStartSpacing(0, 60_000);
  expect(spacing.nextStartAtMs(1_000)).toBe(0);
  expect(spacing.slotGranted(1_000)).toBeUndefined();
});

it("spaces a slot's grant by the delay from its latest start, known sooner at its release", () => {
  const spacing = new IpStartSpacing(500, 60_000);
  const granted = spacing.slotGranted(1_000);
  expect(granted?.startsByMs).toBe(1_000 + IP_START_SLACK_MS);
  expect(spacing.nextStartAtMs(1_000)).toBe(1_000 + IP_START_SLACK_MS + 500);
  spacing.slotReleased(granted as NonNullable<typeof granted>, 1_040);
  expect(spacing.nextStartAtMs(1_040)).toBe(1_540);
});

it("a release bounds nothing once a later grant set the latest start", () => {
  const spacing = new IpStartSpacing(100, 60_000);
  const first = spacing.slotGranted(1_000);
  const second = spacing.slotGranted(1_200);
  spacing.slotReleased(first as NonNullable<typeof first>, 1_210);
  expect(spacing.nextStartAtMs(1_210)).toBe((second?.startsByMs ?? 0) + 100);
});

it("counts starts it does not track, and applies the longest Crawl-delay until it is forgotten", () => {
  const spacing = new IpStartSpacing(100, 60_000);
  expect(spacing.nextStartAtMs(1_000, 2_000)).toBe(2_100);
  spacing.startedBy(3_000);
  expect(spacing.nextStartAtMs(1_000, 2_000)).toBe(3_100);
  spacing.reportCrawlDelay(1_000, 1_000);
  spacing.reportCrawlDelay(400, 2_000);
  expect(spacing.delayMs(2_000)).toBe(1_000);
  expect(spacing.forgettable(61_000)).toBe(false);
  expect(spacing.delayMs(62_000)).toBe(100);
  expect(spacing.forgettable(62_000)).toBe(true);
});
