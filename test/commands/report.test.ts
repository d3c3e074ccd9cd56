import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlReport } from "../../src/report/index.js";
import { CrawlLog, type CrawlLogInput, type WarcExchange, WarcWriter } from "../../src/storage/index.js";
import { type InProcessRun, ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl report --truth FILE DIR...`, run in this process: the figures of crawl logs written by the
 * real CrawlLog writer (a fixture whose repeats, failures and retries are known), and the errors that
 * name the path at fault, with their exit code. The report of real crawls, by a real process:
 * test/cli/report-command.test.ts.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-report-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const page = (url: string, status = 200): CrawlLogInput => ({
  url,
  status,
  bytes: 100,
  contentType: "text/html",
  links: 0,
  durationMs: 1,
  depth: 0,
});
const failure = (url: string, willRetry: boolean): CrawlLogInput => ({
  ...page(url, 0),
  error: "UBI_ERR_CONNECT_FAILED",
  ...(willRetry ? { willRetry: true } : {}),
});

/** A fetch of `url` to archive. */
const exchange = (url: string): WarcExchange => ({
  url,
  ip: "127.0.0.1",
  date: new Date("2026-11-26T12:00:00Z"),
  requestHeaderBlock: `GET ${new URL(url).pathname} HTTP/1.1\r\n\r\n`,
  responseHeaderBlock: "HTTP/1.1 200 OK\r\n\r\n",
  body: new TextEncoder().encode(url),
});

/** Writes `entries` to `<folder>/crawl.log` with the agent's own writer. */
async function writeLog(folder: string, entries: readonly CrawlLogInput[]): Promise<void> {
  const log = new CrawlLog({ dir: folder });
  await log.open();
  for (const entry of entries) log.append(entry);
  await log.close();
}

function report(args: string[]): Promise<InProcessRun> {
  return ubicrawlInProcess(["report", ...args]);
}

describe("ubicrawl report on crawl logs with known figures, in process", () => {
  const u = (n: number) => `http://h${n}.test/p${n}`;
  let alpha: string;
  let beta: string;
  let plain: string;
  let truthFile: string;

  beforeAll(async () => {
    // alpha (named by its WARC file): u1 u2 u3, u4 answered 404 (a fetch all the same), then u9 fails
    // twice with a retry to come and a third time for good.
    alpha = join(dir, "data-a");
    await writeLog(alpha, [
      page(u(1)),
      page(u(2)),
      failure(u(9), true),
      page(u(3)),
      failure(u(9), true),
      page(u(4), 404),
      failure(u(9), false),
    ]);
    // Its pages' records, in a WARC file named after it (beta and plain have no WARC folder).
    const warc = new WarcWriter({ dir: join(alpha, "warc"), agentId: "alpha" });
    await warc.open();
    for (const n of [1, 2, 3, 4]) await warc.write(exchange(u(n)));
    await warc.close();
    // beta (named in its lines): u3 again, u5 (outside the truth), and a line torn by a kill at the end.
    beta = join(dir, "data-b");
    await writeLog(beta, [
      { ...page(u(3)), agent: "beta" },
      { ...page(u(5)), agent: "beta" },
    ]);
    await appendFile(join(beta, "crawl.log"), `{"ts":"2026-11-26T12:00:00.000Z","url":"${u(6)}","sta`);
    // Named by nothing but its folder: u1 a third time (with u3: two URLs fetched more than once).
    plain = join(dir, "data-plain");
    await writeLog(plain, [page(u(1)), page(u(1)), failure(u(8), false)]);
    truthFile = join(dir, "truth");
    await writeFile(truthFile, `${[1, 2, 3, 4, 6].map(u).join("\n")}\n`);
  });

  it("prints coverage, overlap, URLs outside the truth, failures, retries and shares as JSON", async () => {
    const result = await report(["--truth", truthFile, "--json", alpha, beta, plain]);
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout) as CrawlReport & { truthFile: string };
    // Fetches: alpha 4, beta 2, plain 2 = 8, of 5 distinct URLs (u1 ×3, u3 ×2).
    expect(json).toMatchObject({
      truthFile,
      fetches: 8,
      distinctUrls: 5,
      repeatedFetches: 3,
      repeatedUrls: 2,
      overlap: 3 / 5,
      failures: 2,
      retries: 2,
      mostFailedAttempts: { url: u(9), attempts: 3 },
      coverage: { covered: 4, truthSize: 5, fraction: 4 / 5, outsideTruth: 1 },
      archives: { files: 1, unreadable: [], unarchived: 0, examples: [] },
    });
    expect(json.agents).toEqual([
      { agent: "alpha", dir: alpha, pages: 4, share: 4 / 8, failures: 1, retries: 2, tornLine: false },
      { agent: "beta", dir: beta, pages: 2, share: 2 / 8, failures: 0, retries: 0, tornLine: true },
      { agent: plain, dir: plain, pages: 2, share: 2 / 8, failures: 1, retries: 0, tornLine: false },
    ]);
  });

  it("prints the same as text, and everything but coverage without --truth", async () => {
    const text = await report(["--truth", truthFile, alpha, beta, plain]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/coverage: 4\/5 = 80\.00% of the ground truth/);
    expect(text.stdout).toMatch(
      /overlap: 60\.00% \(3 repeated fetches of 5 URLs; 2 URLs fetched more than once\)/,
    );
    expect(text.stdout).toMatch(/outside the truth: 1 URLs fetched/);
    expect(text.stdout).toMatch(/failures: 2 \(status 0, not retried\); retried attempts: 2/);
    expect(text.stdout).toMatch(/^\s+alpha\s+4\s+50\.00%\s+1\s+2\s+\S*data-a$/m);
    expect(text.stdout).toMatch(/^\s+beta\s+2\s+25\.00%\s+0\s+0\s+\S*data-b$/m);
    expect(text.stdout).toMatch(/torn last line was skipped in the crawl log of beta/);
    expect(text.stdout).toMatch(/WARC records: every page fetched has one \(1 WARC files read\)/);

    const bare = await report(["--json", alpha, beta, plain]);
    expect(bare.code, bare.stderr).toBe(0);
    const json = JSON.parse(bare.stdout) as CrawlReport & { truthFile: string | null };
    expect(json).toMatchObject({ truthFile: null, coverage: null, fetches: 8, overlap: 3 / 5 });
    const bareText = await report([alpha]);
    expect(bareText.code, bareText.stderr).toBe(0);
    expect(bareText.stdout).not.toMatch(/coverage:|outside the truth/);
    expect(bareText.stdout).toMatch(/overlap: 0\.00% \(0 repeated fetches of 4 URLs/);
  });
});

describe("ubicrawl report errors", () => {
  it("rejects a folder without a crawl log, naming it, with exit code 2", async () => {
    const empty = join(dir, "not-an-agent");
    await mkdir(empty, { recursive: true });
    const result = await report([empty]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(empty, "crawl.log"));
    expect(result.stderr).toContain("UBI_ERR_INVALID_ARGUMENT");
    const missing = await report([join(dir, "nowhere")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(join(dir, "nowhere", "crawl.log"));
  });

  it("rejects an unreadable truth file, naming it, with exit code 2", async () => {
    const agent = join(dir, "agent-for-truth");
    await writeLog(agent, [page("http://h.test/")]);
    const missing = join(dir, "no-such-truth");
    const result = await report(["--truth", missing, agent]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(missing);
    expect(result.stderr).toContain("UBI_ERR_INVALID_ARGUMENT");
    const folder = await report(["--truth", dir, agent]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(`truth file ${dir}`);
  });

  it("rejects no folder at all, a folder given twice and a line that is not JSON", async () => {
    expect((await report([])).code).toBe(2);
    const agent = join(dir, "agent-twice");
    await writeLog(agent, [page("http://h.test/")]);
    const twice = await report([agent, `${agent}/`]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("given twice");
    const broken = join(dir, "agent-broken");
    await mkdir(broken);
    await writeFile(join(broken, "crawl.log"), '{"url":"http://h.test/","status":200}\nnot json\n');
    const bad = await report([broken]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${join(broken, "crawl.log")}:2`);
  });
});
