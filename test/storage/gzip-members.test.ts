import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it, onTestFinished } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { InlineGzip, WorkerGzip } from "../../src/storage/gzip-members.js";

function records(count: number, seed: number): Buffer[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? randomBytes(10 + ((seed * 31 + i * 977) % 30_000))
      : Buffer.from(`record ${seed}/${i} `.repeat(200)),
  );
}

describe("gzip members", () => {
  it("compresses each record into its own gzip member, in order, in the worker and inline", async () => {
    const worker = new WorkerGzip(1);
    onTestFinished(() => worker.close());
    const inline = new InlineGzip(1);
    // Calls in one event-loop turn share a message to the worker; later ones go in further messages.
    const batches = Array.from({ length: 30 }, (_, i) => records(1 + (i % 3), i));
    const first = batches.slice(0, 20).map((batch) => worker.compress(batch));
    await new Promise((resolve) => setImmediate(resolve));
    const rest = batches.slice(20).map((batch) => worker.compress(batch));
    const results = await Promise.all([...first, ...rest]);
    results.forEach((members, i) => {
      const batch = batches[i] as Buffer[];
      expect(members).toHaveLength(batch.length);
      members.forEach((member, j) => {
        // Each member is a complete gzip stream of its record alone.
        expect(gunzipSync(member).equals(batch[j] as Buffer)).toBe(true);
      });
      expect(inline.compress(batch).map((member) => gunzipSync(member).length)).toEqual(
        batch.map((r) => r.length),
      );
    });
  });

  it("leaves the caller's buffers readable (they are copied, not transferred)", async () => {
    const worker = new WorkerGzip(6);
    onTestFinished(() => worker.close());
    const input = [Buffer.from("a small pooled buffer"), randomBytes(50_000)];
    const copy = input.map((buffer) => Buffer.from(buffer));
    await worker.compress(input);
    expect(input.map((buffer, i) => buffer.equals(copy[i] as Buffer))).toEqual([true, true]);
  });

  it("rejects with a storage error once closed; close is idempotent", async () => {
    const worker = new WorkerGzip(1);
    await worker.compress([Buffer.from("x")]);
    await worker.close();
    await worker.close();
    await expect(worker.compress([Buffer.from("y")])).rejects.toMatchObject({
      code: ErrorCode.StorageFailed,
    });
  });
});
