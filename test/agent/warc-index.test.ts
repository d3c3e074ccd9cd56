import { readFile, truncate } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cdxjProblems, parseCdxj } from "../support/cdxj-check.js";
import {
  agentDataDir,
  type ExitResult,
  listWarcFiles,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  type UbicrawlProcess,
  type WebFixture,
} from "./harness.js";

/**
 * The CDXJ index beside each WARC file, from a real agent: SIGKILLed while it appends, restarted to the
 * crawl's end, then started again over an index torn by hand. Every response and revisit record of
 * every WARC file (as warcio reads it) is in its file's index at its offset and length, lines sorted.
 */

const AGENT = { id: "indexer" };

let fixture: WebFixture;
let killed: ExitResult;
let openFilesAfterKill: string[];
let restarted: ExitResult;

beforeAll(async () => {
  // Slow responses stretch the crawl, so the kill lands mid-crawl; the test web's aliases make revisits.
  fixture = await startWebFixture({ seed: 33, hosts: 16, pages: 800, responseDelayMs: 5 });
  const first = spawnAgent(fixture, AGENT);
  await waitForServed(Math.ceil(fixture.truth().urls.length * 0.4), first);
  first.kill("SIGKILL");
  killed = await first.waitForExit();
  openFilesAfterKill = (await listWarcFiles(agentDataDir(fixture, AGENT))).filter((file) =>
    file.endsWith(".open"),
  );
  restarted = await spawnAgent(fixture, AGENT).waitForExit(120_000);
});

afterAll(async () => {
  await fixture?.stop();
});

async function waitForServed(pages: number, agent: UbicrawlProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (servedPages(fixture.web.recorder).size < pages) {
    if (agent.exited || Date.now() > deadline)
      throw new Error(`the agent did not serve ${pages} pages in time`);
    await delay(5);
  }
}

describe("CDXJ indexes of a crawl killed while appending", () => {
  it("was killed mid-crawl with a live WARC file, and the restart finished the crawl", () => {
    expect(killed.signal).toBe("SIGKILL");
    expect(openFilesAfterKill).toHaveLength(1);
    expect(restarted.code, restarted.stderr).toBe(0);
  });

  it("indexes every response and revisit of every WARC file at its offset and length, sorted", async () => {
    const dataDir = agentDataDir(fixture, AGENT);
    const files = await listWarcFiles(dataDir);
    expect(files.length).toBeGreaterThanOrEqual(2);
    let lines = 0;
    let revisits = 0;
    for (const file of files) {
      expect(await cdxjProblems(file), file).toEqual([]);
      const index = parseCdxj(await readFile(`${file}.cdxj`, "utf8"));
      lines += index.length;
      revisits += index.filter((line) => line.fields.mime === "warc/revisit").length;
    }
    const records = await readWarcRecords(dataDir);
    expect(lines).toBe(records.filter((r) => r.type === "response" || r.type === "revisit").length);
    expect(revisits).toBeGreaterThan(0);
  });

  it("writes a torn index again from its WARC file when the agent next starts", async () => {
    const dataDir = agentDataDir(fixture, AGENT);
    const [killedRunFile] = await listWarcFiles(dataDir);
    const index = `${killedRunFile}.cdxj`;
    const whole = await readFile(index, "utf8");
    // Torn inside a line, as a crash tears a file. (Cut at a line's end, the sorted index would merely
    // lack its later lines, and still cover the file when its last record's line is in the first half.)
    await truncate(index, whole.indexOf("\n", Math.floor(whole.length / 2)) + 20);
    const again = await spawnAgent(fixture, AGENT).waitForExit(60_000);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(index, "utf8")).toBe(whole);
    expect(await cdxjProblems(killedRunFile as string)).toEqual([]);
  });
});
