import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ExitResult,
  readCrawlLogSoFar,
  runUbicrawl,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import { type ClusterAgent, clusterStats, startCluster } from "../cluster/cluster-harness.js";
import { parseIndex, readZip, recordAt, sha256Of } from "./wacz-check.js";

/**
 * `ubicrawl export --agent HOST:PORT --cluster`: a live 2-agent cluster's WARC files and indexes
 * fetched over the Admin service (streamed to disk), packaged as one WACZ. The agents are still up and
 * their WARC files still open (live): each is packaged as of its whole records, indexed by the export.
 * Its refusals (--cluster without --agent, no security, an existing --out), in this process:
 * test/commands/export.test.ts.
 */

let fixture: WebFixture;
let agents: ClusterAgent[];
let exported: ExitResult;
let out: string;
let crawled: Set<string>;

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 37, hosts: 8, pages: 200 });
  // Kept up once the crawl is done, as a cluster left running is.
  agents = await startCluster(fixture, 2, ["--exit-when-done=false"]);
  // The crawl done (every agent idle) but the agents up: their files are live, not finished.
  await waitFor(
    async () => {
      const stats = await clusterStats(agents[0]?.address as string);
      return stats.length === 2 && stats.every((row) => row.idle && row.pagesFetched > 0);
    },
    "the cluster idle after crawling",
    120_000,
  );
  crawled = new Set();
  for (const agent of agents) {
    for (const entry of await readCrawlLogSoFar(agent.dataDir)) {
      if (entry.status > 0 && entry.willRetry !== true) crawled.add(entry.url);
    }
  }
  out = join(fixture.dir, "live.wacz");
  exported = await runUbicrawl([
    "export",
    "--out",
    out,
    "--agent",
    agents[0]?.address as string,
    "--cluster",
    "--insecure",
  ]).waitForExit(120_000);
}, 300_000);

afterAll(async () => {
  await fixture?.stop();
});

describe("export from live agents over the Admin service", () => {
  it("packages every agent's WARC files, the live ones as of their whole records", async () => {
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toMatch(/ of 2 agents \(/);
    for (const agent of agents)
      expect(exported.stdout).toContain(`-${agent.id}.warc.gz of ${agent.id} is live`);
    const packaged = await readZip(out);
    const warcs = [...packaged.keys()].filter((path) => path.startsWith("archive/"));
    for (const agent of agents) {
      expect(
        warcs.some((path) => path.endsWith(`-${agent.id}.warc.gz`)),
        agent.id,
      ).toBe(true);
    }
    // Every hash of datapackage.json matches the bytes packaged.
    const manifest = JSON.parse(packaged.get("datapackage.json")?.bytes.toString("utf8") ?? "{}") as {
      resources: { path: string; hash: string; bytes: number }[];
    };
    for (const resource of manifest.resources) {
      const entry = packaged.get(resource.path);
      expect(entry?.bytes.length, resource.path).toBe(resource.bytes);
      expect(sha256Of(entry?.bytes ?? Buffer.alloc(0)), resource.path).toBe(resource.hash);
    }
    // The index covers every page the crawl logs name, and each line reads back its record.
    const index = parseIndex(packaged.get("indexes/index.cdxj")?.bytes.toString("utf8") ?? "");
    const indexed = new Set(index.map((line) => line.fields.url));
    expect([...crawled].filter((url) => !indexed.has(url))).toEqual([]);
    for (const line of index) {
      const warc = packaged.get(`archive/${line.fields.filename}`)?.bytes as Buffer;
      const record = await recordAt(warc, Number(line.fields.offset), Number(line.fields.length));
      expect(record?.url, line.text).toBe(line.fields.url);
      expect(record?.alone, line.text).toBe(true);
    }
  });

  it("leaves no download folder beside the package", async () => {
    const { readdir } = await import("node:fs/promises");
    expect((await readdir(fixture.dir)).filter((name) => name.startsWith("live.wacz."))).toEqual([]);
  });
});
