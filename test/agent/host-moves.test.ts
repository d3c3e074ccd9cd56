import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  hostOf,
  logRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "./harness.js";

/**
 * A host whose line in the hosts file changes mid-crawl, over real sockets, one agent: its requests
 * after the change arrive at its new address, counted under that address's limits.
 */

/** Two hosts on one address (the one the moved host joins); answers take a little time, so requests there would overlap. */
const WEB = { hosts: 6, pages: 70, seed: 11, responseDelayMs: 20, trap: false, ipGroups: [{ hosts: 2 }] };

let fixture: WebFixture | undefined;
let logDir: string | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
  if (logDir !== undefined) await rm(logDir, { recursive: true, force: true });
  logDir = undefined;
});

/** The served log's lines (`timeMs status ip url`, in the order requests ended). */
async function servedLog(path: string): Promise<{ status: number; ip: string; url: string }[]> {
  return (await readFile(path, "utf8"))
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [, status, ip, url] = line.split(" ");
      return { status: Number(status), ip: ip as string, url: url as string };
    });
}

describe("a host whose address changes mid-crawl", () => {
  it("moves to its new address: requests arrive there, under its --max-per-ip, coverage 100%", async () => {
    logDir = await mkdtemp(join(tmpdir(), "ubicrawl-moves-"));
    const servedLogPath = join(logDir, "served.log");
    fixture = await startWebFixture({ ...WEB, servedLogPath });
    const { web, hostsFile } = fixture;
    const truth = fixture.truth().urls;
    const shared = web.model.hosts[0]?.ip as string;
    // The host outside the shared address with the most pages: it still has pages left when it moves.
    const pagesOf = (name: string) => truth.filter((url) => hostOf(url) === name).length;
    const moved = web.model.hosts
      .filter((host) => host.ip !== shared && host.robots !== "forbidden" && host.robots !== "unavailable")
      .sort((a, b) => pagesOf(b.name) - pagesOf(a.name))[0];
    if (moved === undefined) throw new Error("no host to move");
    expect(pagesOf(moved.name)).toBeGreaterThan(15);

    const agent = spawnAgent(fixture, { id: "moves", delayMs: 100, flags: ["--max-per-ip", "1"] });
    const servedAtHost = () =>
      [...web.recorder.servedCounts()].filter(([url]) => hostOf(url) === moved.name).length;
    while (servedAtHost() < 4 && !agent.exited) await new Promise((resolve) => setTimeout(resolve, 10));
    // The move: served at both addresses (as while resolvers' caches still give the old one), and the
    // hosts file's line changed, written whole.
    web.serveHostAt(moved.name, shared);
    const text = web.hostsFileText().replace(`${moved.ip} ${moved.name}\n`, `${shared} ${moved.name}\n`);
    expect(text).toContain(`${shared} ${moved.name}\n`);
    await writeFile(`${hostsFile}.new`, text);
    await rename(`${hostsFile}.new`, hostsFile);

    const run = await agent.waitForExit(60_000);
    expect(run.code, run.stderr).toBe(0);
    expect(crawlMetrics(servedPages(web.recorder), truth).missing).toEqual([]);
    // Once a request of the host arrived at its new address, none went to the old one.
    const atHost = (await servedLog(servedLogPath)).filter((line) => hostOf(line.url) === moved.name);
    const first = atHost.findIndex((line) => line.ip === shared);
    expect(first, "no request arrived at the new address").toBeGreaterThan(0);
    expect(atHost.slice(first).filter((line) => line.ip !== shared)).toEqual([]);
    expect(atHost.filter((line) => line.status === 421)).toEqual([]);
    // Counted there: never two requests at once at the shared address (--max-per-ip 1).
    expect(web.recorder.maxConcurrencyAtIp(shared)).toBe(1);
    const records = logRecords(run.stderr);
    expect(records.filter((r) => r.event === "host-address-changed")).toMatchObject([
      { host: `${moved.name}:${web.port}`, from: moved.ip, to: shared },
    ]);
    expect(records.some((r) => r.event === "hosts-file-reloaded")).toBe(true);
    expect(records.find((r) => r.event === "stopped")).toMatchObject({ addressChanges: 1 });
  }, 90_000);
});
