import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { AGENT_DEFAULTS, type AgentOptions } from "../../src/agent/agent-options.js";
import { agentArgv, LOOPBACK_CIDR, testWebAgentFlags, UbicrawlProcess } from "../../src/launch/index.js";
import { type CrawlLogEntry, readCrawlLog, warcFileCompression } from "../../src/storage/index.js";
import { readWarcFile, type WarcRecordRead } from "../../src/storage/warc-reader.js";
import {
  computeTruth,
  createTestWebCertificates,
  type RunningTestWeb,
  type ServedRecorder,
  type ServedRequest,
  startTestWeb,
  TEST_WEB_CA_FILE,
  type TestWebOptions,
  type Truth,
  type TruthLimits,
} from "../../src/testweb/index.js";

/**
 * End-to-end harness: an in-process test web (so its recorder can be read), its hosts and seeds files
 * in a temp dir, and real `ubicrawl` child processes. Shared by the single-agent and the cluster tests.
 */

/** Root of the repository (where `bin/ubicrawl` and `dist/` live). */
export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/**
 * Loopback (what `--allow-net` must permit for the test web), the `ubicrawl` entry script, and the
 * wrapper of `ubicrawl` child processes with its readers of their stderr (see src/launch).
 */
export {
  type ExitResult,
  errorLine,
  LOOPBACK_CIDR,
  logEvent,
  logRecords,
  logText,
  UBICRAWL_BIN,
  UbicrawlProcess,
} from "../../src/launch/index.js";

/**
 * Options of an agent run in the test's own process (`Agent.open`, `ClusterNode.start`): loopback
 * allowed, no politeness delay, no progress output, running until stopped; `overrides` win.
 */
export function inProcessAgentOptions(
  agent: Pick<AgentOptions, "id" | "dataDir" | "seeds" | "hostsFile">,
  overrides: Partial<AgentOptions> = {},
): AgentOptions {
  return {
    ...AGENT_DEFAULTS,
    allowNet: [LOOPBACK_CIDR],
    delayMs: 0,
    scopes: [],
    exitWhenDone: false,
    progress: "off",
    ...agent,
    ...overrides,
  };
}

/** Every child spawned and not yet exited, so a failing test can still kill them all. */
const running = new Set<UbicrawlProcess>();

/** Stderr files written so far (see {@link runUbicrawl}). */
let stderrFiles = 0;

/**
 * Spawns `node bin/ubicrawl <args>` (any subcommand) in `cwd` (default: the repository's root), with
 * stdin closed and stdout/stderr captured; `env` adds to (or, undefined, removes from) this process's
 * environment. {@link killAllUbicrawl} kills it if it still runs. Under `UBICRAWL_KEEP_TEST_DIRS=1` its
 * stderr is written to `cwd` when it exits.
 */

export function runUbicrawl(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): UbicrawlProcess {
  const child = UbicrawlProcess.start(args, {
    cwd: options.cwd ?? REPO_ROOT,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  trackUbicrawl(child, options.cwd, args.find((arg) => arg.startsWith("--id="))?.slice(5));
  return child;
}

/**
 * Tracks `child` (started here or another way): {@link killAllUbicrawl} kills it if it still runs, and
 * under `UBICRAWL_KEEP_TEST_DIRS=1` its stderr is written to `cwd` when it exits, named by `id`.
 */
export function trackUbicrawl(child: UbicrawlProcess, cwd?: string, id = "process"): void {
  running.add(child);
  void child.exit.then(async ({ stderr }) => {
    running.delete(child);
    // Kept with the data dirs when asked (see WebFixture.stop).
    if (process.env.UBICRAWL_KEEP_TEST_DIRS === "1" && cwd !== undefined) {
      await writeFile(join(cwd, `stderr-${id}-${++stderrFiles}.log`), stderr).catch(() => {});
    }
  });
}

/** SIGKILLs every spawned process still running and waits for them (for `afterEach`/`afterAll`). */
export async function killAllUbicrawl(): Promise<void> {
  const all = [...running];
  for (const proc of all) proc.kill("SIGKILL");
  await Promise.all(all.map((proc) => proc.waitForExit(10_000).catch(() => undefined)));
}

/** A test web served in-process, with its hosts and seeds files written in a fresh temp dir. */
export interface WebFixture {
  readonly web: RunningTestWeb;
  /** The temp dir (hosts file, seeds file, agents' data dirs); removed by {@link stop}. */
  readonly dir: string;
  readonly hostsFile: string;
  readonly seedsFile: string;
  /** The CA certificate of an `https` web (written only for one), for agents' `--ca-file`. */
  readonly caFile: string;
  /** The truth for the agents' limits (defaults: the agent's defaults). */
  truth(limits?: Partial<TruthLimits>, seeds?: string[]): Truth;
  /**
   * Stops the web, kills every agent still running and removes the temp dir (kept, and its path
   * printed, under `UBICRAWL_KEEP_TEST_DIRS=1`). Idempotent.
   */
  stop(): Promise<void>;
}

/** Starts the test web for `options` and writes `hosts` and `seeds` files in a new temp dir. */
export async function startWebFixture(options: TestWebOptions = {}): Promise<WebFixture> {
  const dir = await mkdtemp(join(tmpdir(), "ubicrawl-e2e-"));
  let web: RunningTestWeb;
  try {
    web = await startTestWeb(options, (model) =>
      createTestWebCertificates(model, join(dir, TEST_WEB_CA_FILE)),
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const hostsFile = join(dir, "hosts");
  const seedsFile = join(dir, "seeds");
  await web.writeHostsFile(hostsFile);
  await writeFile(seedsFile, `${web.seeds.join("\n")}\n`);
  let stopped: Promise<void> | undefined;
  return {
    web,
    dir,
    hostsFile,
    seedsFile,
    caFile: join(dir, TEST_WEB_CA_FILE),
    truth: (limits = {}, seeds) =>
      computeTruth(
        web.model,
        web.port,
        {
          maxDepth: limits.maxDepth ?? AGENT_DEFAULTS.maxDepth,
          maxPagesPerHost: limits.maxPagesPerHost ?? AGENT_DEFAULTS.maxPagesPerHost,
          userAgent: limits.userAgent ?? AGENT_DEFAULTS.userAgent,
        },
        seeds,
      ),
    stop() {
      stopped ??= (async () => {
        await killAllUbicrawl();
        await web.stop();
        // Kept when asked, to read the agents' data dirs (LevelDB, crawl logs) after a run.
        if (process.env.UBICRAWL_KEEP_TEST_DIRS === "1") console.log(`test dir kept: ${dir}`);
        else await rm(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** How to start one agent against a {@link WebFixture}. */
export interface AgentSpawnOptions {
  /** `--id`. */
  readonly id: string;
  /** `--data`. @default `<fixture dir>/data-<id>` */
  readonly dataDir?: string;
  /** `--seeds`. @default the fixture's seeds file */
  readonly seeds?: readonly string[];
  /** Pass `--allow-net 127.0.0.0/8`. @default true */
  readonly allowLoopback?: boolean;
  /** Pass `--exit-when-done`. @default true */
  readonly exitWhenDone?: boolean;
  /** `--delay-ms`. @default 0 */
  readonly delayMs?: number;
  /** `--robots-retry-ms` (short, so the robots.txt 503 host is given up quickly). @default 100 */
  readonly robotsRetryMs?: number;
  /** `--max-robots-attempts`. @default 2 */
  readonly maxRobotsAttempts?: number;
  /** Further flags, appended as given (e.g. `["--max-depth", "8"]` or cluster flags). */
  readonly flags?: readonly string[];
}

/** The `agent` argument list for `options` (without `node bin/ubicrawl`): the test web's agent flags, then `options`. */
export function agentArgs(fixture: WebFixture, options: AgentSpawnOptions): string[] {
  const web = testWebAgentFlags(fixture.hostsFile);
  return [
    ...agentArgv({
      ...web,
      id: options.id,
      data: agentDataDir(fixture, options),
      seeds: options.seeds ?? [fixture.seedsFile],
      ...(options.delayMs === undefined ? {} : { "delay-ms": options.delayMs }),
      ...(options.robotsRetryMs === undefined ? {} : { "robots-retry-ms": options.robotsRetryMs }),
      ...(options.maxRobotsAttempts === undefined
        ? {}
        : { "max-robots-attempts": options.maxRobotsAttempts }),
      "allow-net": (options.allowLoopback ?? true) ? (web["allow-net"] ?? []) : [],
      "exit-when-done": options.exitWhenDone ?? true,
    }),
    ...(options.flags ?? []),
  ];
}

/** The data dir an agent started with `options` uses. */
export function agentDataDir(
  fixture: WebFixture,
  options: Pick<AgentSpawnOptions, "id" | "dataDir">,
): string {
  return options.dataDir ?? join(fixture.dir, `data-${options.id}`);
}

/** Spawns `ubicrawl agent` against the fixture's web (see {@link agentArgs}). */
export function spawnAgent(fixture: WebFixture, options: AgentSpawnOptions): UbicrawlProcess {
  return runUbicrawl(agentArgs(fixture, options), { cwd: fixture.dir });
}

/** Every line of `<dataDir>/crawl.log`. */
export async function readCrawlLogOf(dataDir: string): Promise<CrawlLogEntry[]> {
  const entries: CrawlLogEntry[] = [];
  for await (const entry of readCrawlLog(join(dataDir, "crawl.log"))) entries.push(entry);
  return entries;
}

/**
 * The complete lines of `<dataDir>/crawl.log` as it is on disk now, skipping a last line torn by a
 * SIGKILL (which the agent cuts at its next start).
 */
export async function readCrawlLogSoFar(dataDir: string): Promise<CrawlLogEntry[]> {
  const text = await readFile(join(dataDir, "crawl.log"), "utf8");
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  return complete
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as CrawlLogEntry);
}

/** The WARC files in `<dataDir>/warc`, sorted by name (finished and `.open` ones alike; not their indexes). */
export async function listWarcFiles(dataDir: string): Promise<string[]> {
  const names = (await readdir(join(dataDir, "warc"))).filter(
    (name) => warcFileCompression(name) !== undefined,
  );
  return names.sort().map((name) => join(dataDir, "warc", name));
}

/** A WARC record and the file it was read from. */
export interface WarcRecordIn extends WarcRecordRead {
  readonly file: string;
}

/** Reads every record of every WARC file under `<dataDir>/warc` (throws on an unreadable file). */
export async function readWarcRecords(dataDir: string): Promise<WarcRecordIn[]> {
  const records: WarcRecordIn[] = [];
  for (const file of await listWarcFiles(dataDir)) {
    for await (const record of readWarcFile(file)) records.push({ ...record, file });
  }
  return records;
}

/** True for `http://host:port/robots.txt` (the recorder counts those too). */
export function isRobotsUrl(url: string): boolean {
  return url.endsWith("/robots.txt") && url.indexOf("/", url.indexOf("//") + 2) === url.length - 11;
}

/** Lowercase host name of a URL (no port). */
export function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase();
}

/** How many times each page (robots.txt excluded) was served. */
export function servedPages(recorder: ServedRecorder): Map<string, number> {
  const pages = new Map<string, number>();
  for (const [url, count] of recorder.servedCounts()) if (!isRobotsUrl(url)) pages.set(url, count);
  return pages;
}

/** Coverage and overlap of a crawl (Cho & Garcia-Molina) against the ground truth. */
export interface CrawlMetrics {
  /** Requests for pages (N). */
  readonly total: number;
  /** Distinct pages requested (I). */
  readonly unique: number;
  /** Distinct truth URLs requested / truth size. */
  readonly coverage: number;
  /** (N − I) / I. */
  readonly overlap: number;
  /** Truth URLs never requested, in truth order. */
  readonly missing: string[];
  /** URLs requested that the truth does not contain, sorted. */
  readonly extra: string[];
  /** URLs requested more than once, sorted. */
  readonly repeated: string[];
}

/** Compares served page counts (see {@link servedPages}) with the truth's URLs. */
export function crawlMetrics(
  served: ReadonlyMap<string, number>,
  truthUrls: readonly string[],
): CrawlMetrics {
  const truth = new Set(truthUrls);
  let total = 0;
  let covered = 0;
  const extra: string[] = [];
  const repeated: string[] = [];
  for (const [url, count] of served) {
    total += count;
    if (truth.has(url)) covered++;
    else extra.push(url);
    if (count > 1) repeated.push(url);
  }
  return {
    total,
    unique: served.size,
    coverage: truth.size === 0 ? 1 : covered / truth.size,
    overlap: served.size === 0 ? 0 : (total - served.size) / served.size,
    missing: truthUrls.filter((url) => !served.has(url)),
    extra: extra.sort(),
    repeated: repeated.sort(),
  };
}

/** One request seen by the test web, with monotonic times (ms, `performance.now()`). */
export interface TracedRequest {
  readonly seq: number;
  readonly host: string;
  readonly ip: string;
  readonly url: string;
  readonly beganAtMs: number;
  endedAtMs: number | undefined;
}

/** A running trace of the test web's requests, in arrival order. */
export interface RequestTrace {
  readonly requests: readonly TracedRequest[];
  /** Restores the recorder's own methods. */
  stop(): void;
}

/**
 * Records every request's start and end time by wrapping the recorder's `begin`/`end` (the recorder
 * itself keeps counts and peaks only), for politeness-delay and ordering checks.
 */
export function traceRequests(recorder: ServedRecorder): RequestTrace {
  const requests: TracedRequest[] = [];
  const byServed = new WeakMap<ServedRequest, TracedRequest>();
  const begin = recorder.begin;
  const end = recorder.end;
  recorder.begin = (host, ip, url) => {
    const served = begin.call(recorder, host, ip, url);
    const traced: TracedRequest = {
      seq: requests.length,
      host,
      ip,
      url,
      beganAtMs: performance.now(),
      endedAtMs: undefined,
    };
    requests.push(traced);
    byServed.set(served, traced);
    return served;
  };
  recorder.end = (served, status) => {
    const traced = byServed.get(served);
    if (traced) traced.endedAtMs = performance.now();
    end.call(recorder, served, status);
  };
  return {
    requests,
    stop() {
      recorder.begin = begin;
      recorder.end = end;
    },
  };
}

/** Pairs of traced requests to one host whose lifetimes overlap (politeness broken), earlier first. */
export function overlappingRequests(requests: readonly TracedRequest[]): [TracedRequest, TracedRequest][] {
  const byHost = new Map<string, TracedRequest[]>();
  for (const request of requests) {
    const list = byHost.get(request.host) ?? [];
    list.push(request);
    byHost.set(request.host, list);
  }
  const found: [TracedRequest, TracedRequest][] = [];
  for (const list of byHost.values()) {
    list.sort((a, b) => a.beganAtMs - b.beganAtMs);
    for (let i = 1; i < list.length; i++) {
      const previous = list[i - 1] as TracedRequest;
      const current = list[i] as TracedRequest;
      if ((previous.endedAtMs ?? Number.POSITIVE_INFINITY) > current.beganAtMs)
        found.push([previous, current]);
    }
  }
  return found;
}

/** Polls `predicate` every `intervalMs` until it holds; rejects naming `what` after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 30_000,
  intervalMs = 20,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === "function" ? what() : what}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
