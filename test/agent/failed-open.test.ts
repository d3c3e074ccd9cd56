import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/index.js";
import { getMeta, metaOp, StateStore } from "../../src/storage/index.js";
import { inProcessAgentOptions } from "./harness.js";

/** Writes `value` under the state's metadata `key` (the agent must be closed); returns what was there. */
async function writeMeta(dataDir: string, key: string, value: string): Promise<string | undefined> {
  const store = await StateStore.open(join(dataDir, "state"));
  const before = await getMeta(store, key);
  await store.write([metaOp(key, value)]);
  await store.close();
  return before;
}

describe("an agent whose open fails", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-failed-open-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ["counters", "crawl counters"],
    ["blacklist", "host blacklist"],
  ])("names a damaged %s record, and leaves the folder free to open again", async (key, what) => {
    const options = inProcessAgentOptions({ id: "f1", dataDir: join(dir, "f1"), seeds: [] });
    const first = await Agent.open(options);
    // Both records exist once the agent has a blacklist and has committed once.
    await first.blacklist.add("banned.test");
    await first.stop();
    const saved = await writeMeta(options.dataDir, key, "{not json");
    expect(saved).toBeDefined();

    const failure = `the state's ${what} record is not valid JSON`;
    await expect(Agent.open(options)).rejects.toThrow(failure);
    // The failed open closed the state, the crawl log and the WARC writer: the same process gets the
    // same answer, not LevelDB's lock held by the first attempt.
    await expect(Agent.open(options)).rejects.toThrow(failure);

    await writeMeta(options.dataDir, key, saved as string);
    const agent = await Agent.open(options);
    expect(agent.blacklist.patterns()).toEqual(["banned.test"]);
    await agent.stop();
  });
});
