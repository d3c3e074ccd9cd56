import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, UbiError } from "../../src/errors.js";
import {
  AGENT_ID_FILE,
  prepareDataDir,
  recordedAgentId,
  recordedWarcDir,
  recordWarcDir,
  WARC_DIR_FILE,
} from "../../src/storage/data-dir.js";
import { StateStore } from "../../src/storage/index.js";

/** A data dir is checked before LevelDB or the file system get to say it their way. */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-data-dir-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<UbiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UbiError);
  return error as UbiError;
}

describe("prepareDataDir", () => {
  it("creates a new folder and records the agent id in it", async () => {
    const data = join(dir, "new", "a1");
    await prepareDataDir(data, "a1");
    expect(await readFile(join(data, AGENT_ID_FILE), "utf8")).toBe("a1\n");
    expect(await recordedAgentId(data)).toBe("a1");
    // The same agent again: nothing changes.
    await prepareDataDir(data, "a1");
    expect(await recordedAgentId(data)).toBe("a1");
  });

  it("refuses a folder of another agent id, naming both ids and what to do", async () => {
    const data = join(dir, "taken");
    await prepareDataDir(data, "a1");
    const error = await failure(prepareDataDir(data, "a2"));
    expect(error.code).toBe(ErrorCode.DataDirOfAnotherAgent);
    expect(error.message).toContain(`the data dir ${data} belongs to agent "a1", not "a2"`);
    expect(error.message).toContain("--id a1");
    expect(error.message).toContain("new --data folder");
    expect(await recordedAgentId(data)).toBe("a1");
  });

  it("adopts a folder of an older version, which has no recorded id", async () => {
    const data = join(dir, "legacy");
    await mkdir(join(data, "state"), { recursive: true });
    await prepareDataDir(data, "old-agent");
    expect(await recordedAgentId(data)).toBe("old-agent");
  });

  it("takes over a record torn before its newline (an older version's crash at its first start)", async () => {
    const data = join(dir, "torn");
    await mkdir(data, { recursive: true });
    await writeFile(join(data, AGENT_ID_FILE), "bl");
    expect(await recordedAgentId(data)).toBe("");
    await prepareDataDir(data, "blackout");
    expect(await readFile(join(data, AGENT_ID_FILE), "utf8")).toBe("blackout\n");
    expect((await readdir(data)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("of two agents starting on one new folder at once, refuses one", async () => {
    const data = join(dir, "race");
    const results = await Promise.allSettled([prepareDataDir(data, "x"), prepareDataDir(data, "y")]);
    const refused = results.filter((result) => result.status === "rejected");
    expect(refused).toHaveLength(1);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({
      code: ErrorCode.DataDirOfAnotherAgent,
    });
  });

  it("refuses a file, and a path under a file, as a bad --data", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "not a folder");
    const onFile = await failure(prepareDataDir(file, "a1"));
    expect(onFile.code).toBe(ErrorCode.InvalidArgument);
    expect(onFile.message).toContain(`--data ${file} is a file, not a folder`);
    const under = await failure(prepareDataDir(join(file, "sub"), "a1"));
    expect(under.code).toBe(ErrorCode.InvalidArgument);
    expect(under.message).toContain("is under a file");
  });
});

describe("the data dir's record of --warc-dir", () => {
  it("records the folder absolute, replaces it, and removes it at a start without the flag", async () => {
    const data = join(dir, "warc-dir-record");
    await prepareDataDir(data, "w1");
    expect(await recordedWarcDir(data)).toBeUndefined();
    await recordWarcDir(data, "relative/warcs");
    expect(await recordedWarcDir(data)).toBe(resolve("relative/warcs"));
    await recordWarcDir(data, join(dir, "elsewhere"));
    expect(await readFile(join(data, WARC_DIR_FILE), "utf8")).toBe(`${join(dir, "elsewhere")}\n`);
    await recordWarcDir(data, undefined);
    expect(await readdir(data)).not.toContain(WARC_DIR_FILE);
    await recordWarcDir(data, undefined);
    // A record without its newline is not one of ours: none.
    await writeFile(join(data, WARC_DIR_FILE), "/torn/pa");
    expect(await recordedWarcDir(data)).toBeUndefined();
  });
});

describe("StateStore.open", () => {
  it("says a store another process (or agent) has open is in use, naming its lock", async () => {
    const state = join(dir, "locked", "state");
    const first = await StateStore.open(state);
    try {
      const error = await failure(StateStore.open(state));
      expect(error.code).toBe(ErrorCode.DataDirInUse);
      expect(error.message).toContain(`${state} is in use by another running agent`);
      expect(error.message).toContain(join(state, "LOCK"));
    } finally {
      await first.close();
    }
    // Closed: it opens again.
    await (await StateStore.open(state)).close();
  });
});
