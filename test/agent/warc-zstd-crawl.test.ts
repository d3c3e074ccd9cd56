import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { zstdAvailable } from "../../src/storage/zstd.js";
import { skipWithout } from "../support/tools.js";
import { cliRecords, noZstdCli } from "../support/zstd-cli.js";
import {
  agentDataDir,
  crawlMetrics,
  listWarcFiles,
  readCrawlLogOf,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "./harness.js";

/**
 * A whole crawl archived as `.warc.zst` (`--warc-compression zstd`), read back by Debian's `zstd`
 * command with each file's own dictionary, and by warcio from what it gives.
 */

const noZlib = zstdAvailable()
  ? undefined
  : `node:zlib has no zstd with dictionaries on ${process.version} (22.19+, 24.6+)`;
const AGENT = { id: "zstd-1", flags: ["--warc-compression", "zstd"] };

let fixture: WebFixture;
beforeAll(async () => {
  fixture = await startWebFixture({ hosts: 8, pages: 300, seed: 7 });
});
afterAll(async () => {
  await fixture?.stop();
});

describe.skipIf(noZlib !== undefined || skipWithout(noZstdCli))(
  `--warc-compression zstd${noZlib ? ` (skipped: ${noZlib})` : ""}`,
  () => {
    it("crawls the whole web into .warc.zst files the zstd command reads: a request and a response per fetch", async () => {
      const result = await spawnAgent(fixture, AGENT).waitForExit(120_000);
      expect(result.code, result.stderr).toBe(0);
      expect(crawlMetrics(servedPages(fixture.web.recorder), fixture.truth().urls).coverage).toBe(1);
      const dataDir = agentDataDir(fixture, AGENT);
      const files = await listWarcFiles(dataDir);
      expect(files.length).toBeGreaterThan(0);
      expect(files.every((file) => file.endsWith(".warc.zst"))).toBe(true);
      const requests = new Set<string>();
      const responses = new Set<string>();
      for (const file of files) {
        const records = await cliRecords(file);
        expect(records[0]?.type).toBe("warcinfo");
        for (const record of records) {
          const uri = record.headers.get("warc-target-uri") ?? "";
          if (record.type === "request") requests.add(uri);
          if (record.type === "response" || record.type === "revisit") responses.add(uri);
        }
      }
      const fetched = (await readCrawlLogOf(dataDir)).filter((entry) => entry.status > 0).map((e) => e.url);
      expect([...requests].sort()).toEqual([...new Set(fetched)].sort());
      expect([...responses].sort()).toEqual([...requests].sort());
    });
  },
);

describe.skipIf(noZlib === undefined)(`--warc-compression zstd on ${process.version}`, () => {
  it("is refused before anything starts, naming the Node.js release it needs", async () => {
    const result = await spawnAgent(fixture, {
      id: "zstd-old",
      flags: ["--warc-compression", "zstd"],
    }).waitForExit(20_000);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      "--warc-compression zstd needs Node.js 22.19 (24.6 on the 24 line) or later",
    );
    expect(fixture.web.recorder.totalServed).toBe(0);
  });
});
