import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WarcWriter } from "../../src/storage/index.js";
import { startWebFixture, UBICRAWL_BIN, type WebFixture } from "../agent/harness.js";
import { type ClusterAgent, startClusterAgent } from "../cluster/cluster-harness.js";
import { GNU_TIME, gnuTimeMissing, skipWithout } from "../support/tools.js";
import { readZip } from "./wacz-check.js";

/**
 * `ubicrawl export` in bounded memory: three agents' data dirs of 14,000 HTML pages each (42,000
 * records, written by the agents' own WarcWriter, rotated at 8 MB) exported to one package with the
 * compressed index, then again from the three agents running on those data dirs (`--agent --cluster`,
 * over the Admin service); each export's peak RSS read by GNU time: under 200 MB, the bound for
 * a 40,000-page crawl.
 */

const PAGES_PER_AGENT = 14_000;
const AGENTS = ["mem-a", "mem-b", "mem-c"];
/**
 * Issue 36 asks for under 200 MB. Measured: 148–175 MB on Node 20 and 165–175 MB on Node 26 (the export
 * runs in a worker with a capped heap, src/cli/command-worker.ts; in place it took 230–260 MB on Node 26).
 */
const RSS_BOUND_KB = 200 * 1024;

let dir: string;
/** The web the live agents are given (they crawl nothing: no seeds). */
let web: WebFixture | undefined;

/** A page of about 3 KB: a title, a heading, text and links, different for each `i`. */
function page(agent: string, i: number): string {
  const words = Array.from({ length: 300 }, (_, k) => `w${(i * 31 + k * 7) % 997}`).join(" ");
  return `<!doctype html><html><head><title>Page ${i} of ${agent}</title></head><body><h1>Page ${i} of ${agent}</h1><p>${words}</p><a href="/p/${i + 1}">next</a></body></html>`;
}

/** Writes agent `agent`'s data dir (`<dir>/<agent>`, its WARC files in `warc/`) with the agents' WARC writer. */
async function writeAgentFolder(agent: string): Promise<void> {
  const writer = new WarcWriter({ dir: join(dir, agent, "warc"), agentId: agent, maxFileBytes: 8_000_000 });
  await writer.open();
  for (let from = 0; from < PAGES_PER_AGENT; from += 1000) {
    const writes: Promise<unknown>[] = [];
    for (let i = from; i < from + 1000; i++) {
      const body = Buffer.from(page(agent, i));
      writes.push(
        writer.write({
          url: `http://${agent}.ubi.test:8080/p/${i}`,
          ip: "127.0.0.1",
          date: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)),
          requestHeaderBlock: `GET /p/${i} HTTP/1.1\r\nHost: ${agent}.ubi.test:8080\r\n\r\n`,
          responseHeaderBlock: `HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n`,
          body,
        }),
      );
    }
    await Promise.all(writes);
  }
  await writer.close();
}

/** Runs `ubicrawl export` under GNU time: its exit code, stdout and peak RSS in KB. */
function exportUnderTime(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; maxRssKb: number }> {
  return new Promise((resolve) => {
    const child = spawn(GNU_TIME, ["-f", "maxrss=%M", process.execPath, UBICRAWL_BIN, "export", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("close", (code) => {
      resolve({ code, stdout, stderr, maxRssKb: Number(/maxrss=(\d+)/.exec(stderr)?.[1] ?? Number.NaN) });
    });
  });
}

describe.skipIf(skipWithout(gnuTimeMissing))("export of 42,000 pages in bounded memory", () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ubicrawl-export-memory-"));
    for (const agent of AGENTS) await writeAgentFolder(agent);
  }, 180_000);

  afterAll(async () => {
    await web?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("packages every record with a peak RSS under 200 MB", async () => {
    const out = join(dir, "crawl.wacz");
    const folders = AGENTS.map((agent) => join(dir, agent));
    const warcFiles = (await Promise.all(folders.map((folder) => readdir(join(folder, "warc"))))).flat();
    expect(warcFiles.filter((name) => name.endsWith(".warc.gz")).length).toBeGreaterThan(3);
    const result = await exportUnderTime(["--index", "zipnum", "--out", out, ...folders]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`index: ${3 * PAGES_PER_AGENT} lines (zipnum)`);
    expect(result.stdout).toContain(`pages: ${3 * PAGES_PER_AGENT} `);
    expect((await stat(out)).size).toBeGreaterThan(3 * PAGES_PER_AGENT * 1000);
    expect(result.maxRssKb).toBeLessThan(RSS_BOUND_KB);
    // The compressed index: blocks of 3,000 lines, each found through index.idx, in order.
    const packaged = await readZip(out);
    const cdx = packaged.get("indexes/index.cdx.gz")?.bytes as Buffer;
    const blocks = (packaged.get("indexes/index.idx")?.bytes.toString("utf8") ?? "")
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("!meta"));
    expect(blocks).toHaveLength(Math.ceil((3 * PAGES_PER_AGENT) / 3000));
    const lines: string[] = [];
    for (const block of blocks) {
      const where = JSON.parse(block.slice(block.indexOf(" {"))) as { offset: number; length: number };
      const text = gunzipSync(cdx.subarray(where.offset, where.offset + where.length)).toString("utf8");
      const blockLines = text.split("\n").filter((line) => line !== "");
      expect(blockLines[0]?.startsWith(block.slice(0, block.indexOf(" {")))).toBe(true);
      lines.push(...blockLines);
    }
    expect(lines).toHaveLength(3 * PAGES_PER_AGENT);
    expect(lines).toEqual([...lines].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    console.log(`export of ${3 * PAGES_PER_AGENT} pages: peak RSS ${Math.round(result.maxRssKb / 1024)} MB`);
  }, 180_000);

  it("packages them from the live agents over the Admin service in bounded memory too", async () => {
    // The same data dirs, each now an agent's: up, idle (no seeds), one cluster.
    web = await startWebFixture({ seed: 9, hosts: 6, pages: 60 });
    const agents: ClusterAgent[] = [];
    for (const id of AGENTS) {
      const joining = agents.length === 0 ? {} : { join: [agents[0]?.address as string] };
      agents.push(
        await startClusterAgent(web, {
          id,
          dataDir: join(dir, id),
          ...joining,
          flags: ["--exit-when-done=false"],
        }),
      );
    }
    const out = join(dir, "live.wacz");
    const result = await exportUnderTime([
      "--out",
      out,
      "--agent",
      agents[0]?.address as string,
      "--cluster",
      "--insecure",
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/ of 3 agents \(/);
    expect(result.stdout).toContain(`pages: ${3 * PAGES_PER_AGENT} `);
    expect((await stat(out)).size).toBeGreaterThan(3 * PAGES_PER_AGENT * 1000);
    expect(result.maxRssKb).toBeLessThan(RSS_BOUND_KB);
    console.log(
      `export of ${3 * PAGES_PER_AGENT} pages from 3 live agents: peak RSS ${Math.round(result.maxRssKb / 1024)} MB`,
    );
  }, 180_000);
});
