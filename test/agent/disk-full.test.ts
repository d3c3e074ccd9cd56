import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  readCrawlLogOf,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "./harness.js";

/** A tiny tmpfs to fill up; only root can mount one (CI and these machines run as root). */
function mountTmpfs(path: string, size: string): boolean {
  try {
    mkdirSync(path, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", path], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

let fixture: WebFixture | undefined;
let mounted: string | undefined;

afterEach(async () => {
  // The fixture's stop cannot remove its folder while the tmpfs is mounted inside: unmount, then
  // remove what is left (else an empty folder stays behind at every run).
  await fixture?.stop().catch(() => {});
  if (mounted) execFileSync("umount", ["-l", mounted], { stdio: "ignore" });
  if (fixture) rmSync(fixture.dir, { recursive: true, force: true });
  fixture = undefined;
  mounted = undefined;
});

describe("a full disk", () => {
  it("stops fetching and says so, loses nothing, and resumes when space returns", async (context) => {
    fixture = await startWebFixture({ hosts: 20, pages: 1500, seed: 5 });
    const dir = join(fixture.dir, "small-disk");
    if (!mountTmpfs(dir, "2m")) {
      context.skip();
      return;
    }
    mounted = dir;
    const truth = fixture.truth();
    const dataDir = join(dir, "data");
    const agent = spawnAgent(fixture, { id: "a1", dataDir, flags: ["--max-active-hosts", "8"] });
    await waitFor(
      () => /fetching stopped, nothing is lost/.test(agent.stderr()),
      "the disk-full report",
      60_000,
    );
    expect(agent.exited).toBe(false);
    const servedWhileFull = servedPages(fixture.web.recorder).size;
    expect(servedWhileFull).toBeLessThan(truth.urls.length);
    // Space returns: the agent notices on its next retry and finishes the crawl.
    execFileSync("mount", ["-o", "remount,size=256m", dir]);
    const result = await agent.waitForExit(90_000);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/writes succeed again; fetching resumed/);
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    // Every fetched page is archived and logged, the files readable to the end.
    const records = await readWarcRecords(dataDir);
    const archived = new Set(
      records
        .filter((record) => record.type === "response" || record.type === "revisit")
        .map((record) => record.headers.get("warc-target-uri")),
    );
    expect(truth.urls.filter((url) => !archived.has(url))).toEqual([]);
    const logged = new Set((await readCrawlLogOf(dataDir)).filter((e) => e.status > 0).map((e) => e.url));
    expect(truth.urls.filter((url) => !logged.has(url))).toEqual([]);
  }, 180_000);
});

describe("an unwritable data dir", () => {
  it("is refused with a clear error, keeps what it holds, and the crawl resumes once it is writable", async (context) => {
    // 864 URLs (1,500 pages made 1,667): the agent is stopped at 100 served, far from the end, and the
    // resumed crawl, which completes it, has the rest to fetch.
    fixture = await startWebFixture({ hosts: 20, pages: 600, seed: 6, responseDelayMs: 2 });
    const dir = join(fixture.dir, "disk");
    if (!mountTmpfs(dir, "256m")) {
      context.skip();
      return;
    }
    mounted = dir;
    const truth = fixture.truth();
    const dataDir = join(dir, "data");
    const spec = { id: "a1", dataDir, flags: ["--max-active-hosts", "4"] };
    const recorder = fixture.web.recorder;
    const first = spawnAgent(fixture, spec);
    await waitFor(() => servedPages(recorder).size >= 100, "the crawl to start");
    first.kill("SIGTERM");
    expect((await first.waitForExit(30_000)).code).toBe(0);
    const servedBefore = servedPages(recorder).size;
    expect(servedBefore).toBeLessThan(truth.urls.length);
    const loggedBefore = (await readCrawlLogOf(dataDir)).length;

    // Read-only (a file system remounted so after errors, a full quota…): a clear error, nothing fetched.
    execFileSync("mount", ["-o", "remount,ro", dir]);
    const refused = await spawnAgent(fixture, spec).waitForExit(30_000);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `the data dir ${dataDir} is not writable: it is on a read-only file system`,
    );
    expect(servedPages(recorder).size).toBe(servedBefore);

    // Writable again: the same data dir picks the crawl up where it stopped and completes it.
    execFileSync("mount", ["-o", "remount,rw", dir]);
    expect((await readCrawlLogOf(dataDir)).length).toBe(loggedBefore);
    const resumed = await spawnAgent(fixture, spec).waitForExit(90_000);
    expect(resumed.code, resumed.stderr).toBe(0);
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
  }, 180_000);
});
