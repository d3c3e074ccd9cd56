import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Level } from "level";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { corruptStateError, isCorruption, StateStore } from "../../src/storage/index.js";
import { repairStateStore } from "../../src/storage/state/state-repair.js";
import { agentDataDir, logEvent, runUbicrawl, spawnAgent, startWebFixture } from "../agent/harness.js";

/**
 * A damaged state store found and named: what LevelDB drops silently while it recovers a scribbled
 * log is reported at open, its "Corruption: …" becomes UBI_ERR_STORAGE_CORRUPT with the folder and
 * what to do, and `ubicrawl repair` rebuilds the store from what is readable, saying what it lost.
 */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-state-damage-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A LevelDB store of `count` records, left in its write-ahead log (`tables`: moved to a table file). */
async function storeOf(stateDir: string, count: number, tables: boolean): Promise<void> {
  const db = new Level<string, string>(stateDir);
  await db.open();
  await db.batch(
    Array.from(
      { length: count },
      (_, i) => ({ type: "put", key: `k${i}`, value: `${"v".repeat(60)}${i}` }) as const,
    ),
  );
  for (let i = 0; i < count; i += 100) await db.put(`later${i}`, "x".repeat(60));
  await db.close();
  if (tables) {
    // Reopened, LevelDB turns its log into a table file.
    const again = new Level(stateDir);
    await again.open();
    await again.close();
  }
}

/** Overwrites 4 KB in the middle of the file of `stateDir` whose name ends with `suffix`. */
async function scribble(stateDir: string, suffix: string): Promise<void> {
  const name = (await readdir(stateDir)).find((file) => file.endsWith(suffix));
  if (!name) throw new Error(`no ${suffix} file in ${stateDir}`);
  const bytes = await readFile(join(stateDir, name));
  randomBytes(4096).copy(bytes, Math.floor(bytes.length / 2));
  await writeFile(join(stateDir, name), bytes);
}

async function countRecords(stateDir: string): Promise<number> {
  const db = new Level<string, string>(stateDir);
  await db.open();
  let count = 0;
  for await (const _ of db.keys()) count++;
  await db.close();
  return count;
}

describe("a damaged state store", () => {
  it("says at open what LevelDB dropped of a scribbled log, which it would otherwise do without a word", async () => {
    const stateDir = join(dir, "state");
    await storeOf(stateDir, 20_000, false);
    const whole = await StateStore.open(join(dir, "copy-whole"));
    expect(whole.damageAtOpen).toEqual([]);
    await whole.close();
    await scribble(stateDir, ".log");
    const store = await StateStore.open(stateDir);
    try {
      expect(store.damageAtOpen.join("\n")).toMatch(/dropping \d+ bytes; Corruption: /);
    } finally {
      await store.close();
    }
  });

  it("names LevelDB's corruption with its folder, a code and what to do", () => {
    const leveldb = Object.assign(new Error("Corruption: bad block type"), { code: "LEVEL_CORRUPTION" });
    const wrapped = new Error("Iterator failed", { cause: leveldb });
    expect(isCorruption(wrapped)).toBe(true);
    expect(isCorruption(new Error("ENOSPC: no space left on device"))).toBe(false);
    const coded = corruptStateError(wrapped, "/data/a1/state", "/data/a1");
    expect(isUbiError(coded, ErrorCode.StorageCorrupt)).toBe(true);
    expect(coded.message).toContain(
      "the state store in /data/a1/state is damaged (LevelDB: Iterator failed)",
    );
    expect(coded.message).toContain("ubicrawl repair --data /data/a1");
  });

  it("is rebuilt by repair from what is readable, saying what it found and dropped", async () => {
    const stateDir = join(dir, "state");
    await storeOf(stateDir, 20_000, true);
    const records = await countRecords(stateDir);
    await scribble(stateDir, ".ldb");
    const repair = await repairStateStore(stateDir);
    expect(repair.before.damage).toMatch(/Corruption: /);
    expect(repair.dropped.length).toBeGreaterThan(0);
    expect(repair.after.damage).toBeUndefined();
    expect(repair.after.records).toBeGreaterThan(0);
    expect(repair.after.records).toBeLessThan(records);
    expect(await countRecords(stateDir)).toBe(repair.after.records);
  });

  it("is repaired by `ubicrawl repair`, which says what it lost and exits 0", async () => {
    // Its refusals (a store an agent has open, no store), in this process: test/commands/repair.test.ts.
    const dataDir = join(dir, "agent");
    await storeOf(join(dataDir, "state"), 20_000, true);
    await scribble(join(dataDir, "state"), ".ldb");
    const repaired = await runUbicrawl(["repair", "--data", dataDir]).waitForExit(30_000);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toMatch(/damaged — a full read stopped after \d+ records at: .*Corruption: /);
    expect(repaired.stdout).toMatch(/^repaired: all \d+ records now read whole; restart the agent on /m);
    expect(repaired.stdout).toMatch(/what the dropped records said is lost/);
    expect(repaired.stderr).toBe("");
  });

  it("is reported by an agent restarted on it, with the code and what LevelDB dropped", async () => {
    const fixture = await startWebFixture({ hosts: 8, pages: 600, seed: 4 });
    try {
      const first = await spawnAgent(fixture, { id: "a1" }).waitForExit(90_000);
      expect(first.code, first.stderr).toBe(0);
      const stateDir = join(agentDataDir(fixture, { id: "a1" }), "state");
      await scribble(stateDir, ".log");
      const again = await spawnAgent(fixture, { id: "a1" }).waitForExit(90_000);
      expect(logEvent(again.stderr, "storage-damaged")).toMatchObject({
        level: "warn",
        code: ErrorCode.StorageCorrupt,
        leveldb: expect.arrayContaining([expect.stringMatching(/dropping \d+ bytes; Corruption: /)]),
      });
    } finally {
      await fixture.stop();
    }
  });
});
