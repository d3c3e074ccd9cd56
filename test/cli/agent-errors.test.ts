import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterCertificates } from "../../src/security/index.js";
import {
  type ExitResult,
  errorLine,
  killAllUbicrawl,
  logEvent,
  logText,
  readCrawlLogSoFar,
  runUbicrawl,
  waitFor,
} from "../agent/harness.js";
import { identityIn } from "../security/tls-agents.js";
import { type InProcessRun, ubicrawlInProcess } from "../support/in-process-cli.js";

/**
 * `ubicrawl agent` says what is wrong, and what to do: a crawl that fetched nothing or had nothing left
 * to do, a data dir in use, an address in use, a certificate and a key that do not match. Real
 * processes (but for the certificate's refusal, in process), a real web server on loopback. The refusals
 * of bad seeds, of no seeds, and of a data dir that is a file or another agent's, in process:
 * test/commands/agent-refusals.test.ts.
 */

let dir: string;
let site: Server;
let sitePort: number;
let hostsFile: string;
/** Requests the site answered. */
let served = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-agent-errors-"));
  site = createServer((request, response) => {
    served++;
    if (request.url === "/robots.txt") response.writeHead(404).end();
    else response.writeHead(200, { "content-type": "text/html" }).end("<html><body>one page</body></html>");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  sitePort = (site.address() as AddressInfo).port;
  hostsFile = join(dir, "hosts");
  await writeFile(hostsFile, "127.0.0.1 site.test\n");
});

afterAll(async () => {
  await killAllUbicrawl();
  site.closeAllConnections();
  await new Promise((resolve) => site.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function agent(...args: string[]): Promise<ExitResult> {
  return runUbicrawl(["agent", "--progress", "off", ...args], { cwd: dir }).waitForExit(30_000);
}

/** The flags of a crawl of the one-page site, on loopback. */
function siteSeed(): string[] {
  return [
    "--seeds",
    `http://site.test:${sitePort}/`,
    "--hosts-file",
    hostsFile,
    "--allow-net",
    "127.0.0.0/8",
  ];
}

/** The crawl log's complete lines so far; none before the agent created it. */
async function crawlLogLines(dataDir: string): Promise<number> {
  return (await readCrawlLogSoFar(dataDir).catch(() => [])).length;
}

function expectError(result: ExitResult | InProcessRun, exitCode: number, code: string): string {
  expect(result.code, result.stderr).toBe(exitCode);
  const line = errorLine(result.stderr);
  expect(line, result.stderr).toMatch(new RegExp(`\\[${code}\\]$`));
  return line;
}

describe("a crawl that fetched nothing", () => {
  it("exits 1 naming the network policy and --allow-net; rerun on its data dir, says it was tried before", async () => {
    const data = join(dir, "fenced");
    const seeds = join(dir, "mixed.txt");
    await writeFile(seeds, `http://site.test:${sitePort}/\nnot a url\n`);
    const common = [
      "--id",
      "f",
      "--data",
      data,
      "--seeds",
      seeds,
      "--hosts-file",
      hostsFile,
      "--exit-when-done",
    ];
    const servedBefore = served;
    const first = await agent(...common);
    // The bad line is reported, and the crawl goes on with the good one.
    expect(logText(first.stderr)).toContain(
      `warn: skipping 1 seed: ${seeds}:2: "not a url" is not an http(s) URL`,
    );
    expect(logEvent(first.stderr, "stopped")?.reason).toBe("done");
    const line = expectError(first, 1, "UBI_ERR_NOTHING_FETCHED");
    expect(line).toContain("agent f fetched no page: every URL it tried failed");
    expect(line).toContain("1 URL refused by the network policy");
    expect(line).toContain("UBI_ERR_ADDRESS_FORBIDDEN");
    expect(line).toContain("--allow-net CIDR");
    expect(served).toBe(servedBefore);

    // Fixed, on the same data dir: the seed was tried there already, and the agent says so.
    const again = await agent(...common, "--allow-net", "127.0.0.0/8");
    expect(logText(again.stderr)).toContain(
      `the crawl in data dir ${data} is complete: its seed was tried there before`,
    );
    expect(logText(again.stderr)).toContain("new --data folder");
    const rerun = expectError(again, 1, "UBI_ERR_NOTHING_FETCHED");
    expect(rerun).toContain(`its seeds were tried in an earlier run in the data dir ${data} and failed then`);
    expect(rerun).toContain("UBI_ERR_ADDRESS_FORBIDDEN");
    expect(rerun).toContain("start a new crawl with a new --data folder");
  });

  it("in a cluster, exits 1 when its own flags kept its share from fetching anything", async () => {
    const result = await agent(
      "--id",
      "k",
      "--data",
      join(dir, "cluster-fenced"),
      "--seeds",
      `http://site.test:${sitePort}/`,
      "--hosts-file",
      hostsFile,
      "--listen",
      "127.0.0.1:0",
      "--insecure",
      "--heartbeat-ms",
      "100",
      "--suspect-after-ms",
      "500",
      "--exit-when-done",
    );
    const line = expectError(result, 1, "UBI_ERR_NOTHING_FETCHED");
    expect(line).toContain("agent k fetched no page: every URL it tried failed");
    expect(line).toContain("--allow-net CIDR");
  });

  it("exits 1 naming the hosts file when no seed's name is in it", async () => {
    const result = await agent(
      "--id",
      "d",
      "--data",
      join(dir, "no-name"),
      "--seeds",
      `http://nowhere.test:${sitePort}/`,
      `http://nowhere-else.test:${sitePort}/`,
      "--hosts-file",
      hostsFile,
      "--allow-net",
      "127.0.0.0/8",
      "--exit-when-done",
    );
    const line = expectError(result, 1, "UBI_ERR_NOTHING_FETCHED");
    expect(line).toContain(
      `2 URLs with a host name not in the hosts file ${hostsFile} (UBI_ERR_DNS_NOT_FOUND)`,
    );
  });

  it("a complete crawl run again says it is complete and how to start a new one, and exits 0; without seeds, at once", async () => {
    const data = join(dir, "complete");
    const args = [
      "--id",
      "c",
      "--data",
      data,
      "--seeds",
      `http://site.test:${sitePort}/`,
      "--hosts-file",
      hostsFile,
      "--allow-net",
      "127.0.0.0/8",
      "--exit-when-done",
    ];
    const first = await agent(...args);
    expect(first.code, first.stderr).toBe(0);
    // The page and the /sitemap.xml tried on its host (site.test's robots.txt names none).
    expect(logEvent(first.stderr, "stopped")?.pagesFetchedThisRun).toBe(2);
    // Said at the start: how long an unavailable robots.txt could hold the end (the defaults: 3 tries 60 s apart).
    expect(logEvent(first.stderr, "end-wait-notice")?.msg).toContain(
      "is tried 3 times 60 s apart before its pages are given up, so the end can wait up to 120 s",
    );
    const second = await agent(...args);
    expect(second.code, second.stderr).toBe(0);
    expect(logEvent(second.stderr, "start-notice")?.msg).toContain(
      `the crawl in data dir ${data} is complete: its seed was tried there before and nothing is queued (2 pages fetched there since it began)`,
    );
    expect(logText(second.stderr)).toContain("start a new crawl with a new --data folder");

    // Restarted without seeds (nor --exit-when-done): nothing to do, said, and an exit 0 at once.
    const again = await agent(
      "--id",
      "c",
      "--data",
      data,
      "--hosts-file",
      hostsFile,
      "--allow-net",
      "127.0.0.0/8",
    );
    expect(again.code, again.stderr).toBe(0);
    expect(logEvent(again.stderr, "start-notice")?.msg).toContain(
      `nothing to crawl: no --seeds, and nothing is queued in data dir ${data} (2 pages fetched there before)`,
    );
    expect(logEvent(again.stderr, "nothing-to-do")?.msg).toBe(
      "stopping: an agent alone (no --listen) with nothing queued can get no work",
    );
    expect(logEvent(again.stderr, "stopped")?.pagesFetchedThisRun).toBe(0);
  });
});

describe("an agent alone with nothing to crawl", () => {
  it("restarted without seeds on a data dir with queued work, resumes it and runs on", async () => {
    const data = join(dir, "queued-before");
    // A long politeness delay keeps the seed queued after the host's robots.txt.
    const servedBefore = served;
    const first = runUbicrawl(
      ["agent", "--id", "q", "--data", data, "--progress", "off", ...siteSeed(), "--delay-ms", "60000"],
      { cwd: dir },
    );
    await waitFor(() => served > servedBefore, "the robots.txt asked for", 20_000);
    first.kill("SIGTERM");
    expect((await first.waitForExit(20_000)).code).toBe(0);
    expect(await crawlLogLines(data)).toBe(0);
    const resumed = runUbicrawl(
      [
        "agent",
        "--id",
        "q",
        "--data",
        data,
        "--progress",
        "off",
        "--hosts-file",
        hostsFile,
        "--allow-net",
        "127.0.0.0/8",
      ],
      { cwd: dir },
    );
    await waitFor(
      async () => (await crawlLogLines(data)) === 2,
      "the queued seed and its host's sitemap fetched",
      20_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(resumed.exited, resumed.stderr()).toBe(false);
    expect(resumed.stderr()).not.toContain("nothing-to-do");
    resumed.kill("SIGTERM");
    expect((await resumed.waitForExit(20_000)).code).toBe(0);
  });
});

describe("--data", () => {
  it("a data dir in use by a running agent is named as such", async () => {
    const data = join(dir, "busy");
    // Without --exit-when-done an agent alone runs on once its crawl is complete.
    const running = runUbicrawl(
      ["agent", "--id", "busy", "--data", data, "--progress", "off", ...siteSeed()],
      {
        cwd: dir,
      },
    );
    await waitFor(
      async () => (await crawlLogLines(data)) > 0,
      "the first agent to open its store and fetch",
      20_000,
    );
    const refused = await agent("--id", "busy", "--data", data);
    const line = expectError(refused, 1, "UBI_ERR_DATA_DIR_IN_USE");
    expect(line).toContain(`the data dir ${data} is in use by another running agent`);
    expect(line).toContain(join(data, "state", "LOCK"));
    // A fatal record, with its code and what caused it (LevelDB's own words) for a log pipeline.
    const failed = logEvent(refused.stderr, "failed");
    expect(failed).toMatchObject({ level: "fatal", agent: "busy", code: "UBI_ERR_DATA_DIR_IN_USE" });
    expect(failed?.cause).toMatch(/lock/i);
    expect(failed?.err).toBeUndefined();
    running.kill("SIGTERM");
    expect((await running.waitForExit(20_000)).code).toBe(0);
  });
});

describe("a cluster agent's own files and address", () => {
  it("an address in use says so", async () => {
    // Whatever holds the address: a plain server of the test's.
    const holder = createNetServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(holder.address() as AddressInfo).port}`;
    try {
      const result = await agent("--id", "l2", "--data", join(dir, "l2"), "--listen", address, "--insecure");
      const line = expectError(result, 1, "UBI_ERR_LISTEN_FAILED");
      expect(line).toContain(`cannot listen on ${address}: the address is already in use`);
      // No raw grpc-js line.
      expect(result.stderr).not.toMatch(/No address added/);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("a TLS certificate and key that do not match say so, naming both files", async () => {
    const certs = join(dir, "certs");
    await createClusterCertificates({ outDir: certs, agents: ["t1", "t2"], operator: false });
    const t1 = identityIn(certs, "t1");
    const t2 = identityIn(certs, "t2");
    // In process: refused before anything is bound (the CLI's own wiring of a refusal: config-file.test.ts).
    const result = await ubicrawlInProcess([
      "agent",
      "--id",
      "t1",
      "--data",
      join(dir, "t1"),
      "--listen",
      "127.0.0.1:0",
      "--tls-ca",
      t1.caPath,
      "--tls-cert",
      t1.files.certPath,
      "--tls-key",
      t2.files.keyPath,
    ]);
    const line = expectError(result, 1, "UBI_ERR_CERTIFICATE");
    expect(line).toContain(`--tls-cert ${t1.files.certPath} and --tls-key ${t2.files.keyPath} do not match`);
  });
});
