import { describe, expect, it } from "vitest";
import { CrawlStats } from "../../src/agent/index.js";
import { UrlIntake } from "../../src/cluster/url-intake.js";
import { ErrorCode } from "../../src/errors.js";
import type { UrlBatch } from "../../src/transport/index.js";
import { ManualClock } from "../support/manual-clock.js";

/** An agent that owns the hosts named `mine.test`, records what it queued and routed, and its commits. */
function fakeAgent() {
  const accepted: string[] = [];
  const routed: string[] = [];
  let commits = 0;
  let gate: Promise<void> = Promise.resolve();
  const agent = {
    id: "self",
    stats: new CrawlStats(new ManualClock(0)),
    accept: (url: string) => {
      if (accepted.includes(url)) return false;
      accepted.push(url);
      return true;
    },
    route: (url: string) => {
      routed.push(url);
    },
    commit: async () => {
      await gate;
      commits++;
    },
  };
  return {
    agent,
    accepted,
    routed,
    commits: () => commits,
    /** Holds every commit until the returned function is called. */
    holdCommits: () => {
      let open = () => {};
      gate = new Promise((resolve) => {
        open = resolve;
      });
      return open;
    },
  };
}

function intakeOf(fake: ReturnType<typeof fakeAgent>, maxConcurrentSubmits?: number) {
  const partition = { batchesReceived: 0 };
  /** What was kept for its owner, unsent: "owner url". */
  const kept: string[] = [];
  const intake = new UrlIntake(maxConcurrentSubmits === undefined ? {} : { maxConcurrentSubmits }, {
    agent: fake.agent,
    ownership: { ownerOfUrl: (_url, host) => (host.startsWith("mine.test") ? "self" : "other") },
    partition,
    exchange: { keep: (owner, url) => kept.push(`${owner} ${url}`) },
  });
  return { intake, partition, kept };
}

function batch(batchId: string, urls: readonly string[]): UrlBatch {
  return { batchId, fromId: "peer", urls: urls.map((url) => ({ url, depth: 1 })) } as UrlBatch;
}

describe("UrlIntake", () => {
  it("queues its own hosts' URLs, forwards the others', counts duplicates, and answers once committed", async () => {
    const fake = fakeAgent();
    const { intake } = intakeOf(fake);
    const ack = await intake.submitUrls(
      batch("b1", ["http://mine.test/a", "http://mine.test/a", "http://theirs.test/b", "not a url"]),
    );
    expect(ack).toEqual({ accepted: 1, forwarded: 1, duplicates: 1 });
    expect(fake.accepted).toEqual(["http://mine.test/a"]);
    expect(fake.routed).toEqual(["http://theirs.test/b"]);
    expect(fake.commits()).toBe(1);
  });

  it("keeps a leaving agent's URLs for their owners, unsent and unqueued, and queues its own as any other", async () => {
    const fake = fakeAgent();
    const { intake, kept } = intakeOf(fake);
    const ack = await intake.submitUrls({
      ...batch("b1", [
        "http://theirs.test/b",
        "http://mine.test/a",
        "http://mine.test/a",
        "http://theirs.test/c",
      ]),
      keepForOwners: true,
    });
    expect(ack).toEqual({ accepted: 1, forwarded: 0, duplicates: 1, kept: 2 });
    expect(kept).toEqual(["other http://theirs.test/b", "other http://theirs.test/c"]);
    expect(fake.routed).toEqual([]);
    expect(fake.accepted).toEqual(["http://mine.test/a"]);
    expect(fake.commits()).toBe(1);
  });

  it("counts a batch sent again (a retry) once in the traffic figures", async () => {
    const fake = fakeAgent();
    const { intake, partition } = intakeOf(fake);
    await intake.submitUrls(batch("b1", ["http://mine.test/a", "http://mine.test/b"]));
    await intake.submitUrls(batch("b1", ["http://mine.test/a", "http://mine.test/b"]));
    expect(partition.batchesReceived).toBe(1);
    expect(fake.agent.stats.peer("peer")).toMatchObject({ batchesReceived: 1, urlsReceived: 2 });
  });

  it("refuses a batch with no valid http(s) URL, and queues nothing of it", async () => {
    const fake = fakeAgent();
    const { intake } = intakeOf(fake);
    await expect(intake.submitUrls(batch("b1", ["ftp://mine.test/a", "nonsense"]))).rejects.toMatchObject({
      code: ErrorCode.BadMessage,
    });
    expect(fake.accepted).toEqual([]);
    expect(fake.commits()).toBe(0);
  });

  it("answers Overloaded past maxConcurrentSubmits batches in progress, and takes batches again after", async () => {
    const fake = fakeAgent();
    const { intake } = intakeOf(fake, 2);
    const open = fake.holdCommits();
    const first = intake.submitUrls(batch("b1", ["http://mine.test/1"]));
    const second = intake.submitUrls(batch("b2", ["http://mine.test/2"]));
    await expect(intake.submitUrls(batch("b3", ["http://mine.test/3"]))).rejects.toMatchObject({
      code: ErrorCode.Overloaded,
    });
    open();
    await Promise.all([first, second]);
    await expect(intake.submitUrls(batch("b3", ["http://mine.test/3"]))).resolves.toMatchObject({
      accepted: 1,
    });
  });

  it("refuses every batch while closed (the agent is leaving), and takes them again once reopened", async () => {
    const fake = fakeAgent();
    const { intake } = intakeOf(fake);
    intake.closeIntake();
    await expect(intake.submitUrls(batch("b1", ["http://mine.test/a"]))).rejects.toMatchObject({
      code: ErrorCode.Overloaded,
    });
    expect(fake.accepted).toEqual([]);
    intake.reopenIntake();
    await expect(intake.submitUrls(batch("b1", ["http://mine.test/a"]))).resolves.toMatchObject({
      accepted: 1,
    });
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => intakeOf(fakeAgent(), 0)).toThrow(/maxConcurrentSubmits/);
  });
});
