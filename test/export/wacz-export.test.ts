import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listWarcFiles, readWarcRecords, runUbicrawl } from "../agent/harness.js";
import { chromiumMissing, skipWithout } from "../support/tools.js";
import { type CrawledCluster, crawlClusterWithDuplicates } from "./cluster-crawl.js";
import { headingOf, launchReplayBrowser, type ReplayBrowser, replayedText } from "./replay-check.js";
import { type ReplayServer, startReplayServer } from "./replay-server.js";
import { type IndexLine, parseIndex, readZip, recordAt, sha256Of, type ZipEntryRead } from "./wacz-check.js";

/**
 * `ubicrawl export` of a real 3-agent crawl (a join, a SIGKILL and restart, duplicate content across
 * agents), read back with yauzl and warcio: every file's hash and size as datapackage.json says, the
 * WARC files stored byte for byte, the merged index sorted with every line reading back its record,
 * the revisits whose original another agent stored indexed beside it, and the pages list.
 */

let crawl: CrawledCluster;
let outPath: string;
let exported: { code: number | null; stdout: string; stderr: string };
let zip: Map<string, ZipEntryRead>;
let index: IndexLine[];
let zipnumPath: string;
let zipnumExport: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  crawl = await crawlClusterWithDuplicates();
  outPath = join(crawl.fixture.dir, "crawl.wacz");
  zipnumPath = join(crawl.fixture.dir, "crawl-zipnum.wacz");
  // The two exports at once: each only reads the data dirs.
  [exported, zipnumExport] = await Promise.all([
    runUbicrawl([
      "export",
      "--out",
      outPath,
      "--seeds",
      crawl.fixture.seedsFile,
      ...crawl.dataDirs.values(),
    ]).waitForExit(60_000),
    runUbicrawl(["export", "--index", "zipnum", "--out", zipnumPath, ...crawl.dataDirs.values()]).waitForExit(
      60_000,
    ),
  ]);
  zip = await readZip(outPath);
  index = parseIndex(entry("indexes/index.cdxj").toString("utf8"));
}, 240_000);

afterAll(async () => {
  await crawl?.fixture.stop();
});

function entry(path: string): Buffer {
  const found = zip.get(path);
  if (!found) throw new Error(`the package has no ${path}`);
  return found.bytes;
}

/** The id of the agent whose WARC file this is (its name ends with the id). */
function agentOf(filename: string): string | undefined {
  return crawl.ids.find((id) => filename.endsWith(`-${id}.warc.gz`));
}

/** A revisit of another URL whose original another agent archived, with that original's line. */
/** The revisits of another URL's page whose original another agent archived, with their originals. */
function crossAgentRevisits(): { revisit: IndexLine; original: IndexLine }[] {
  const found: { revisit: IndexLine; original: IndexLine }[] = [];
  const originals = new Map<string, IndexLine>();
  for (const line of index) {
    if (line.fields.mime === "text/html" && line.fields.status === "200") {
      originals.set(line.fields.digest as string, line);
    }
  }
  for (const line of index) {
    const original = originals.get(line.fields.digest as string);
    if (
      line.fields.mime === "warc/revisit" &&
      line.fields.status === "200" &&
      original !== undefined &&
      original.fields.url !== line.fields.url &&
      agentOf(original.fields.filename as string) !== agentOf(line.fields.filename as string)
    ) {
      found.push({ revisit: line, original });
    }
  }
  return found;
}

describe("ubicrawl export of a 3-agent crawl", () => {
  it("crawled to the end with every agent, one killed mid-crawl and restarted, and exported with exit 0", () => {
    expect(crawl.killed.signal).toBe("SIGKILL");
    for (const exit of crawl.exits) expect(exit.code, exit.stderr).toBe(0);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain(`WARC files of 3 agents`);
    expect(exported.stdout).not.toContain("left out");
  });

  it("holds every finished WARC file of every agent, stored byte for byte", async () => {
    const agentsWithFiles = new Set<string>();
    for (const dir of crawl.dataDirs.values()) {
      const files = await listWarcFiles(dir);
      expect(files.filter((file) => file.endsWith(".open"))).toEqual([]);
      for (const file of files.filter((name) => name.endsWith(".warc.gz"))) {
        const packaged = zip.get(`archive/${basename(file)}`);
        expect(packaged, file).toBeDefined();
        expect(packaged?.compressionMethod).toBe(0);
        expect(packaged?.bytes.equals(await readFile(file))).toBe(true);
        agentsWithFiles.add(agentOf(basename(file)) ?? file);
      }
    }
    expect([...agentsWithFiles].sort()).toEqual([...crawl.ids].sort());
  });

  it("lists every file with its SHA-256 and size in datapackage.json, itself hashed in datapackage-digest.json", () => {
    const manifest = JSON.parse(entry("datapackage.json").toString("utf8")) as {
      profile: string;
      wacz_version: string;
      resources: { name: string; path: string; hash: string; bytes: number }[];
    };
    expect(manifest.profile).toBe("data-package");
    expect(manifest.wacz_version).toBe("1.1.1");
    const listed = manifest.resources.map((resource) => resource.path).sort();
    const inZip = [...zip.keys()].filter((path) => !path.startsWith("datapackage")).sort();
    expect(listed).toEqual(inZip);
    expect(listed).toContain("indexes/index.cdxj");
    expect(listed).toContain("pages/pages.jsonl");
    for (const resource of manifest.resources) {
      const bytes = entry(resource.path);
      expect(resource.hash, resource.path).toBe(sha256Of(bytes));
      expect(resource.bytes, resource.path).toBe(bytes.length);
      expect(resource.name).toBe(basename(resource.path));
    }
    const digest = JSON.parse(entry("datapackage-digest.json").toString("utf8")) as {
      path: string;
      hash: string;
    };
    expect(digest).toEqual({ path: "datapackage.json", hash: sha256Of(entry("datapackage.json")) });
  });

  it("has one sorted index whose every line reads back, with warcio, its record at its offset and length", async () => {
    const texts = index.map((line) => line.text);
    expect(texts).toEqual([...texts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    let records = 0;
    for (const dir of crawl.dataDirs.values()) {
      records += (await readWarcRecords(dir)).filter(
        (r) => r.type === "response" || r.type === "revisit",
      ).length;
    }
    expect(index).toHaveLength(records);
    for (const line of index) {
      const warc = entry(`archive/${line.fields.filename}`);
      const record = await recordAt(warc, Number(line.fields.offset), Number(line.fields.length));
      expect(record?.url, line.text).toBe(line.fields.url);
      expect(record?.alone, line.text).toBe(true);
      expect(record?.type).toBe(line.fields.mime === "warc/revisit" ? "revisit" : "response");
    }
  });

  it("indexes revisits whose original another agent stored, beside that original", () => {
    const responses = new Map<string, IndexLine>();
    for (const line of index) {
      if (line.fields.mime !== "warc/revisit") responses.set(line.fields.digest as string, line);
    }
    const revisits = index.filter((line) => line.fields.mime === "warc/revisit");
    expect(revisits.length).toBeGreaterThan(0);
    for (const revisit of revisits) {
      expect(responses.has(revisit.fields.digest as string), revisit.text).toBe(true);
    }
    const acrossAgents = revisits.filter(
      (revisit) =>
        agentOf(revisit.fields.filename as string) !==
        agentOf(responses.get(revisit.fields.digest as string)?.fields.filename as string),
    );
    // How many depends on which agent's copy is first (two fetched at once are both stored, counted).
    expect(acrossAgents.length).toBeGreaterThan(0);
    expect(revisits.every((revisit) => agentOf(revisit.fields.filename as string) !== undefined)).toBe(true);
  });

  it("lists the HTML pages answered 200, with their titles, the seeds marked", () => {
    const [header, ...pages] = entry("pages/pages.jsonl")
      .toString("utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { url: string; ts: string; title?: string; seed?: boolean });
    expect(header).toMatchObject({ format: "json-pages-1.0", id: "pages" });
    const html200 = new Set(
      index
        .filter((line) => line.fields.status === "200" && line.fields.mime === "text/html")
        .map((line) => line.fields.url),
    );
    expect(html200.size).toBeGreaterThan(100);
    const listed = new Set(pages.map((page) => page.url));
    for (const url of html200) expect(listed.has(url), url).toBe(true);
    const seeds = crawl.fixture.web.seeds;
    // A page fetched twice (the kill, a hand-over) is listed once per capture: compared as sets.
    const seedsListed = new Set(pages.filter((page) => page.seed).map((page) => page.url));
    expect([...seedsListed].sort()).toEqual([...new Set(seeds.filter((seed) => listed.has(seed)))].sort());
    expect(seedsListed.size).toBeGreaterThan(0);
    const titled = pages.filter((page) => page.title !== undefined && page.title.length > 0);
    expect(titled.length).toBeGreaterThan(html200.size * 0.9);
  });
});

describe("ubicrawl export --index zipnum", () => {
  it("writes the same index as gzipped blocks, each listed in index.idx with its first key, offset, length and SHA-256", async () => {
    expect(zipnumExport.code, zipnumExport.stderr).toBe(0);
    expect(zipnumExport.stdout).toContain("(zipnum)");
    const packaged = await readZip(zipnumPath);
    expect(packaged.has("indexes/index.cdxj")).toBe(false);
    const cdx = packaged.get("indexes/index.cdx.gz")?.bytes as Buffer;
    const [meta, ...blocks] = (packaged.get("indexes/index.idx")?.bytes.toString("utf8") ?? "")
      .split("\n")
      .filter((line) => line !== "");
    expect(JSON.parse((meta as string).slice((meta as string).indexOf(" {")))).toMatchObject({
      format: "cdxj-gzip-1.0",
      filename: "index.cdx.gz",
    });
    let end = 0;
    const lines: string[] = [];
    for (const block of blocks) {
      const at = block.indexOf(" {");
      const where = JSON.parse(block.slice(at)) as { offset: number; length: number; digest: string };
      expect(where.offset).toBe(end);
      const bytes = cdx.subarray(where.offset, where.offset + where.length);
      expect(where.digest).toBe(sha256Of(bytes));
      const blockLines = gunzipSync(bytes)
        .toString("utf8")
        .split("\n")
        .filter((line) => line !== "");
      expect(blockLines[0]?.startsWith(`${block.slice(0, at)} {`)).toBe(true);
      lines.push(...blockLines);
      end = where.offset + where.length;
    }
    expect(end).toBe(cdx.length);
    expect(blocks.length).toBe(Math.ceil(index.length / 3000));
    expect(lines).toEqual(index.map((line) => line.text));
  });
});

describe("ubicrawl export --force", () => {
  // Its refusals (an existing --out without --force, folders that are not data dirs), in this process:
  // test/commands/export.test.ts.
  it("replaces an existing --out", async () => {
    const out = join(crawl.fixture.dir, "again.wacz");
    await writeFile(out, "not a package");
    const dir = crawl.dataDirs.values().next().value as string;
    const forced = await runUbicrawl(["export", "--force", "--out", out, dir]).waitForExit();
    expect(forced.code, forced.stderr).toBe(0);
    expect((await readZip(out)).has("datapackage.json")).toBe(true);
  });
});

describe.skipIf(skipWithout(chromiumMissing))(
  "the package replayed in ReplayWeb.page in headless Chromium",
  () => {
    let server: ReplayServer;
    let browser: ReplayBrowser;

    beforeAll(async () => {
      // The live web is gone: what renders comes from the package.
      await crawl.fixture.web.stop();
      server = await startReplayServer(outPath);
      browser = await launchReplayBrowser();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    /** The heading of the page a line indexes, read from the package with warcio. */
    async function headingAt(line: IndexLine): Promise<string | undefined> {
      const warc = entry(`archive/${line.fields.filename}`);
      const record = await recordAt(warc, Number(line.fields.offset), Number(line.fields.length));
      return headingOf(record?.payload ?? "");
    }

    /** A cross-agent revisit whose original has a heading to look for (a frameset page has none). */
    async function crossAgentRevisitWithHeading(): Promise<{
      revisit: IndexLine;
      original: IndexLine;
      heading: string;
    }> {
      for (const { revisit, original } of crossAgentRevisits()) {
        const heading = await headingAt(original);
        if (heading !== undefined) return { revisit, original, heading };
      }
      throw new Error("no revisit of another URL's page with a heading archived by another agent");
    }

    it("renders a page archived by each agent", async () => {
      for (const id of crawl.ids) {
        const candidates = index.filter(
          (line) =>
            line.fields.status === "200" &&
            line.fields.mime === "text/html" &&
            agentOf(line.fields.filename as string) === id,
        );
        let line: IndexLine | undefined;
        let heading: string | undefined;
        for (const candidate of candidates) {
          heading = await headingAt(candidate);
          if (heading !== undefined) {
            line = candidate;
            break;
          }
        }
        expect(line, `a page of ${id} with a heading`).toBeDefined();
        const text = await replayedText(browser.context, server.origin, line as IndexLine, heading as string);
        expect(text, `${line?.fields.url} (${id})`).toContain(heading);
      }
    }, 300_000);

    it("renders a revisit whose original another agent archived, with the original's content", async () => {
      const { revisit, original, heading } = await crossAgentRevisitWithHeading();
      const text = await replayedText(browser.context, server.origin, revisit, heading);
      expect(text, `${revisit.fields.url}, a revisit of ${original.fields.url}`).toContain(heading);
    }, 120_000);

    it("renders the same revisit from the package with the compressed (ZipNum) index", async () => {
      const { revisit, heading } = await crossAgentRevisitWithHeading();
      const zipnumServer = await startReplayServer(zipnumPath);
      try {
        const text = await replayedText(browser.context, zipnumServer.origin, revisit, heading);
        expect(text, `${revisit.fields.url} through index.idx`).toContain(heading);
        expect(zipnumServer.requested.filter((path) => path === "/crawl.wacz").length).toBeGreaterThan(1);
      } finally {
        await zipnumServer.close();
      }
    }, 120_000);

    it("sent no request off loopback, and read the package by ranges", () => {
      expect(browser.offLoopback).toEqual([]);
      expect(browser.requested.some((url) => url.endsWith("/crawl.wacz"))).toBe(true);
      expect(server.requested.filter((path) => path === "/crawl.wacz").length).toBeGreaterThan(1);
    });
  },
);
