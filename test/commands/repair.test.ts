import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Level } from "level";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl repair --data DIR`, run in this process: what it says of a whole store, and its refusals
 * (no --data, no store, a store an agent has open) with their exit codes. A damaged store repaired by
 * a real process, its exit code and what it says: test/faults/state-damage.test.ts.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-repair-command-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A data dir whose state store holds `count` records. */
async function dataDirOf(name: string, count: number): Promise<string> {
  const data = join(dir, name);
  const db = new Level<string, string>(join(data, "state"));
  await db.open();
  await db.batch(
    Array.from({ length: count }, (_, i) => ({ type: "put", key: `k${i}`, value: "v" }) as const),
  );
  await db.close();
  return data;
}

describe("ubicrawl repair", () => {
  it("says a whole store read whole before and after the repair, and exits 0", async () => {
    const data = await dataDirOf("whole", 50);
    const result = await ubicrawlInProcess(["repair", "--data", data]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`${join(data, "state")}: all 50 records read whole before the repair`);
    // What LevelDB's repair writes in its own words (it says "some data may have been lost" even of a
    // whole store), then the read after it.
    expect(lines[1]).toMatch(/^LevelDB's repair reported/);
    expect(lines[2]).toBe(`repaired: all 50 records now read whole; restart the agent on ${data}`);
    expect(result.stderr).toBe("");
  });

  it("refuses a store an agent has open, with exit 1, and repairs it once closed", async () => {
    const data = await dataDirOf("held", 5);
    const held = new Level(join(data, "state"));
    await held.open();
    try {
      const refused = await ubicrawlInProcess(["repair", "--data", data]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^ubicrawl repair: .*held.state is open in a running agent: stop it before repairing its state store \[UBI_ERR_DATA_DIR_IN_USE\]\n$/,
      );
      expect(refused.stdout).toBe("");
    } finally {
      await held.close();
    }
    expect((await ubicrawlInProcess(["repair", "--data", data])).code).toBe(0);
  });

  it("refuses a folder without a state store, and no --data, with exit 2", async () => {
    const none = await ubicrawlInProcess(["repair", "--data", join(dir, "nothing")]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/there is no state store in .*nothing.state: give the agent's --data folder/);
    const missing = await ubicrawlInProcess(["repair"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      "ubicrawl repair: --data is required (ubicrawl repair --data DIR) [UBI_ERR_INVALID_ARGUMENT]\n",
    );
  });

  it("prints its help on stdout", async () => {
    const result = await ubicrawlInProcess(["repair", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: ubicrawl repair --data DIR\n/);
    expect(result.stdout).toContain("Exits 0 when the store reads whole after the");
  });
});
