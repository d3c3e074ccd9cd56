import { describe, expect, it } from "vitest";
import { STORAGE_RETRY_MS, StorageGuard } from "../../src/agent/storage-guard.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";

async function setup(writesFailFor: number) {
  const clock = new ManualClock();
  const events: string[] = [];
  const { logger } = await recordingLogger({
    onRecord: (record) => events.push(`${record.level}: ${record.msg}`),
  });
  let attempts = 0;
  const guard = new StorageGuard({
    clock,
    pause: () => events.push("pause"),
    resume: () => events.push("resume"),
    retryWrites: async () => {
      attempts++;
      if (attempts <= writesFailFor) throw new UbiError(ErrorCode.StorageFailed, "ENOSPC");
    },
    logger,
  });
  return { clock, events, guard, attempts: () => attempts };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("StorageGuard", () => {
  it("stops fetching on a storage failure, says why, and resumes once writes succeed", async () => {
    const { clock, events, guard, attempts } = await setup(2);
    expect(guard.handle(new UbiError(ErrorCode.StorageFailed, "cannot write the state store: ENOSPC"))).toBe(
      true,
    );
    expect(guard.isDown).toBe(true);
    expect(events[0]).toBe("pause");
    expect(events[1]).toMatch(/^error: .*ENOSPC.*fetching stopped, nothing is lost/);
    // A second failure while down changes nothing.
    expect(guard.handle(new UbiError(ErrorCode.StorageFailed, "again"))).toBe(true);
    expect(events.filter((event) => event === "pause")).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      clock.advance(STORAGE_RETRY_MS);
      await flush();
      expect(guard.isDown).toBe(true);
    }
    clock.advance(STORAGE_RETRY_MS);
    await flush();
    expect(attempts()).toBe(3);
    expect(guard.isDown).toBe(false);
    expect(events.slice(-2)).toEqual(["warn: writes succeed again; fetching resumed", "resume"]);
    expect(guard.outages).toBe(1);
  });

  it("leaves other errors to the caller", async () => {
    const { guard, events } = await setup(0);
    expect(guard.handle(new UbiError(ErrorCode.ConnectFailed, "refused"))).toBe(false);
    expect(guard.handle(new Error("bug"))).toBe(false);
    expect(events).toEqual([]);
  });

  it("stops retrying when stopped", async () => {
    const { clock, guard, attempts } = await setup(10);
    guard.handle(new UbiError(ErrorCode.StorageFailed, "EROFS"));
    guard.stop();
    clock.advance(STORAGE_RETRY_MS * 3);
    await flush();
    expect(attempts()).toBe(0);
  });
});
