// The processes a benchmark starts: the test web and the agents, each a `node bin/ubicrawl …` child,
// so the crawler's CPU and memory are measured apart from the bench and from the web it crawls.
// Every child is stopped by its own PID (never by name); CPU comes from the kernel's accounting of
// reaped children, peak RSS from /proc/<pid>/status.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { get } from "node:http";
import { get as getTls } from "node:https";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { agentArgv, testWebAgentFlags, UBICRAWL_BIN, UbicrawlProcess } from "../../dist/launch/index.js";

const CHECKOUT = resolve(fileURLToPath(import.meta.url), "../../..");

/** The `ubicrawl` command of this checkout (runs dist/, so `npm run build` first). */
export const UBICRAWL = UBICRAWL_BIN;

/** The command children run: {@link UBICRAWL}, or a snapshot of it (see {@link snapshotUbicrawl}). */
let ubicrawlCommand = UBICRAWL;

/**
 * Copies the built crawler (dist/, bin/, proto/, package.json; node_modules linked) into `dir` and
 * makes every child started afterwards run that copy: a rebuild of dist/ while a benchmark runs (tests
 * rebuild it) then cannot change or break the code under measurement halfway.
 * @param {string} dir an empty folder
 * @returns {string} the snapshot's `bin/ubicrawl`
 */
export function snapshotUbicrawl(dir) {
  mkdirSync(dir, { recursive: true });
  for (const part of ["dist", "bin", "proto", "package.json"]) {
    cpSync(join(CHECKOUT, part), join(dir, part), { recursive: true });
  }
  symlinkSync(join(CHECKOUT, "node_modules"), join(dir, "node_modules"), "dir");
  ubicrawlCommand = join(dir, "bin/ubicrawl");
  return ubicrawlCommand;
}

/**
 * A started `bin/ubicrawl` child for a benchmark: the shared wrapper (src/launch's `UbicrawlProcess`,
 * which spawns, reads the output and stops by PID) with the times a benchmark measures, the CPU it is
 * pinned to, and its exit as one value.
 */
export class Child {
  /** @type {import("../../dist/launch/index.js").UbicrawlProcess} */
  #process;

  /**
   * Starts `bin/ubicrawl args` as a child.
   * @param {string} name shown in errors
   * @param {readonly string[]} args arguments of bin/ubicrawl
   * @param {SpawnOptions} [options] CPU pinning, cgroup and extra node flags
   * @returns {Child}
   */
  static start(name, args, options = {}) {
    return new Child(UbicrawlProcess.start(args, { name, ...processOptionsOf(options) }), options);
  }

  /**
   * The child of `started`, from now on: started by {@link Child.start}, or by the launcher's
   * `AgentCluster` with {@link processOptionsOf} `options`.
   * @param {import("../../dist/launch/index.js").UbicrawlProcess} started
   * @param {SpawnOptions} [options] what it was started with
   */
  constructor(started, options = {}) {
    this.name = started.name;
    /** Monotonic start time (performance.now()), and the same instant as epoch ms. */
    this.startedAtMs = performance.now();
    this.startedAtEpochMs = Date.now();
    /** @type {number | undefined} monotonic exit time */
    this.exitedAtMs = undefined;
    /** @type {number | undefined} */
    this.exitedAtEpochMs = undefined;
    /** The CPU this child is pinned to, if any. */
    this.core = options.core;
    this.#process = started;
    this.process = this.#process.child;
    this.pid = this.#process.pid;
    this.process.once("exit", () => {
      this.exitedAtMs = performance.now();
      this.exitedAtEpochMs = Date.now();
    });
    /** Resolves with the exit code (or the signal name) once the child is reaped and its stderr read. */
    this.exited = this.#process.exit.then(({ code, signal }) => code ?? signal);
  }

  /** The lines of its stderr so far. */
  get stderrLines() {
    return this.#process.stderrLines();
  }

  /** True once the child has exited. */
  get done() {
    return this.exitedAtMs !== undefined;
  }

  /**
   * Resolves with the first match of `pattern` on stderr; rejects if the child exits first.
   * @param {RegExp} pattern
   * @param {number} timeoutMs
   * @returns {Promise<RegExpExecArray>}
   */
  waitForLine(pattern, timeoutMs) {
    return this.#process.waitForLine(pattern, timeoutMs);
  }

  /**
   * Resolves with the first log record of `event` (an agent logs JSON records when its stderr is not
   * a terminal: `listening` with its `address`, `console` with its `url`…); rejects if the child exits
   * first.
   * @param {string} event
   * @param {number} timeoutMs
   */
  waitForEvent(event, timeoutMs) {
    return this.#process.waitForEvent(event, timeoutMs);
  }

  /** Sends SIGTERM to this child's PID, then SIGKILL after a grace period; resolves once it exited. */
  async stop() {
    await this.#process.stop();
    return this.exited;
  }
}

/**
 * How a child is started beyond its arguments: the CPU it is pinned to, the `cgroup.procs` file of
 * the cgroup it runs in (see cpu-quota.mjs), extra node flags.
 * @typedef {{ core?: number, cgroupProcs?: string, nodeArgs?: readonly string[] }} SpawnOptions
 */

/**
 * The launcher's process options for a child started with `options`: the snapshot's entry script, and
 * node pinned to its CPU (taskset) in its cgroup (sh) — both exec node in place, so the PID (stopped,
 * sampled, accounted) is node's own.
 * @param {SpawnOptions} options
 * @returns {{ command: string[], bin: string }}
 */
export function processOptionsOf(options) {
  const node = [process.execPath, ...(options.nodeArgs ?? [])];
  const pinned = options.core === undefined ? node : ["taskset", "-c", String(options.core), ...node];
  // Joining the cgroup before node starts puts every thread node will ever have under its limit.
  const command =
    options.cgroupProcs === undefined
      ? pinned
      : ["sh", "-c", 'echo $$ > "$0" && exec "$@"', options.cgroupProcs, ...pinned];
  return { command, bin: ubicrawlCommand };
}

/**
 * Starts `ubicrawl testweb` and waits until it serves; its hosts file, seeds and truth go to `dir`
 * (and, over https, its CA certificate: `files.ca`, for agents' `--ca-file`). The web's shape beyond
 * its size (`maxArticlesPerHost`, `biggestHostPercent`, `goneHosts`) keeps the test web's defaults
 * when left out.
 * @param {string} dir
 * @param {{ seed: number, hosts: number, pages: number, scheme?: "http" | "https", http2?: boolean, maxArticlesPerHost?: number, biggestHostPercent?: number, goneHosts?: number }} web
 * @param {SpawnOptions} [options]
 */
export async function startTestWebProcess(dir, web, options = {}) {
  const files = {
    hosts: join(dir, "hosts"),
    seeds: join(dir, "seeds"),
    truth: join(dir, "truth"),
    ca: join(dir, "testweb-ca.pem"),
  };
  const https = web.scheme === "https";
  const child = Child.start(
    "testweb",
    [
      "testweb",
      ...["--seed", String(web.seed), "--hosts", String(web.hosts), "--pages", String(web.pages)],
      ...["--hosts-file", files.hosts, "--seeds-file", files.seeds, "--truth", files.truth],
      ...shapeFlags(web),
      ...(https ? ["--scheme", "https", "--ca-out", files.ca, ...(web.http2 ? ["--http2"] : [])] : []),
    ],
    options,
  );
  const match = await child.waitForLine(/^test web: \d+ hosts on port (\d+)/, 120_000);
  const port = Number(match[1]);
  // The line comes just before the web installs its SIGTERM handler: one answered request proves the
  // event loop has turned since, so a stop() right away ends it gracefully (not by the default action).
  await requestRobots(files.hosts, port, https ? readFileSync(files.ca, "utf8") : undefined);
  return { child, port, files };
}

/**
 * The `ubicrawl testweb` flags of a web's shape, for the fields `web` sets.
 * @param {{ maxArticlesPerHost?: number, biggestHostPercent?: number, goneHosts?: number, sharedAddressPercent?: number }} web
 * @returns {string[]}
 */
function shapeFlags(web) {
  const flags = [];
  if (web.maxArticlesPerHost !== undefined)
    flags.push("--max-articles-per-host", String(web.maxArticlesPerHost));
  if (web.biggestHostPercent !== undefined)
    flags.push("--biggest-host-percent", String(web.biggestHostPercent));
  if (web.goneHosts !== undefined) flags.push("--gone-hosts", String(web.goneHosts));
  if (web.sharedAddressPercent !== undefined)
    flags.push("--shared-address-percent", String(web.sharedAddressPercent));
  return flags;
}

/**
 * GETs /robots.txt of the first host of a test web hosts file (a loopback address) and drains it; over
 * TLS, trusting `ca`.
 */
async function requestRobots(hostsFile, port, ca) {
  const first = readFileSync(hostsFile, "utf8")
    .split("\n")
    .find((line) => line !== "" && !line.startsWith("#"));
  const [ip, name] = (first ?? "").split(/\s+/);
  if (!ip?.startsWith("127.") || name === undefined) throw new Error(`no loopback host in ${hostsFile}`);
  await new Promise((resolveGet, reject) => {
    const request = (ca === undefined ? get : getTls)(
      {
        host: ip,
        port,
        path: "/robots.txt",
        headers: { host: `${name}:${port}` },
        ...(ca === undefined ? {} : { ca, servername: name }),
      },
      (response) => {
        response.resume();
        response.once("end", resolveGet);
        response.once("error", reject);
      },
    );
    request.once("error", reject);
  });
}

/**
 * The flags every bench agent runs with: the test web's agent flags (names only through its hosts
 * file, loopback allowed, no politeness delay, a quick robots.txt retry, exit once the crawl is done,
 * no progress records, `--dedup local`), `maxActiveHosts` hosts at once (the agent's default when
 * undefined), and `overrides` on top (e.g. `{ dedup: "cluster" }`, the agent's own default).
 * @param {string} hostsFile
 * @param {number | undefined} maxActiveHosts
 * @param {import("../../dist/launch/index.js").AgentFlagValues} [overrides]
 * @returns {string[]} words after `agent --id ID`
 */
export function benchAgentFlags(hostsFile, maxActiveHosts, overrides = {}) {
  return agentArgv({
    ...testWebAgentFlags(hostsFile),
    "max-active-hosts": maxActiveHosts,
    ...overrides,
  }).slice(1);
}

/**
 * Starts `ubicrawl agent` with `args` (after `agent`), its log as JSON records.
 * @param {string} id
 * @param {readonly string[]} args
 * @param {SpawnOptions} [options]
 */
export function startAgentProcess(id, args, options = {}) {
  return Child.start(id, ["agent", "--id", id, "--log-format", "json", ...args], options);
}

/**
 * The CPUs this process may run on (its affinity mask, as `taskset -c` numbers them), or
 * `0 … availableParallelism − 1` where `taskset` cannot tell.
 * @returns {number[]}
 */
export function allowedCores() {
  try {
    const list = execFileSync("taskset", ["-cp", String(process.pid)], { encoding: "utf8" });
    const cores = [];
    for (const part of list
      .slice(list.lastIndexOf(":") + 1)
      .trim()
      .split(",")) {
      const [from, to = from] = part.split("-").map(Number);
      for (let core = from; core <= to; core++) cores.push(core);
    }
    if (cores.length > 0 && cores.every(Number.isInteger)) return cores;
  } catch {
    // no taskset: fall through
  }
  return Array.from({ length: availableParallelism() }, (_, i) => i);
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * User + system CPU seconds of this process's reaped children (cutime + cstime of /proc/self/stat):
 * exact for a child once it has exited, so the difference across a child's exit is its whole CPU time.
 */
export function reapedChildrenCpuSeconds() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after "pid (comm) ", which may itself hold spaces: state is field 3, cutime 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
}

/**
 * User + system CPU seconds in a `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` line (utime and
 * stime, fields 14 and 15, counted after "pid (comm) " since comm may hold spaces).
 * @param {string} stat
 */
function cpuSecondsOfStat(stat) {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * User + system CPU seconds of a running process so far (all its threads).
 * @param {number} pid
 */
export function processCpuSeconds(pid) {
  return cpuSecondsOfStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

/**
 * Samples the peak resident set (VmHWM) of some PIDs until stopped: the kernel keeps the high-water
 * mark, so a sample shortly before the exit sees the peak. Each sample also reads the CPU time of
 * every thread of the PID (`/proc/<pid>/task/<tid>/stat`), so the split between the main thread and
 * the others is known up to the last sample before the exit (at most one interval of CPU missed), and
 * the process's CPU so far with the time, so its CPU in any span of its run is known (`cpuSeriesOf`).
 */
export class PeakRssSampler {
  /**
   * @param {number} intervalMs
   */
  constructor(intervalMs = 100) {
    /** @type {Map<number, number>} peak bytes by PID */
    this.peaks = new Map();
    /** @type {Map<number, Map<number, number>>} CPU seconds by thread id, by PID */
    this.threads = new Map();
    /** @type {Map<number, [number, number][]>} [epoch ms, CPU seconds of the process] samples, by PID */
    this.series = new Map();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  /** @param {number} pid */
  watch(pid) {
    this.peaks.set(pid, 0);
    this.threads.set(pid, new Map());
    this.series.set(pid, []);
    this.sample();
  }

  sample() {
    for (const pid of this.peaks.keys()) {
      let status;
      try {
        status = readFileSync(`/proc/${pid}/status`, "utf8");
      } catch {
        continue; // exited
      }
      const match = /VmHWM:\s+(\d+) kB/.exec(status);
      if (match) this.peaks.set(pid, Math.max(this.peaks.get(pid) ?? 0, Number(match[1]) * 1024));
      this.sampleThreads(pid);
      try {
        this.series.get(pid)?.push([Date.now(), processCpuSeconds(pid)]);
      } catch {
        // exited since
      }
    }
  }

  /** @param {number} pid */
  sampleThreads(pid) {
    const threads = this.threads.get(pid);
    let tids;
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return; // exited
    }
    for (const tid of tids) {
      try {
        threads?.set(Number(tid), cpuSecondsOfStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")));
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }

  /** Peak RSS of `pid` in bytes (0 if never sampled). @param {number} pid */
  peakOf(pid) {
    return this.peaks.get(pid) ?? 0;
  }

  /**
   * CPU seconds of `pid`'s threads at the last sample: its main thread, its busiest other thread (in
   * an agent, the WARC worker that compresses and digests every record), and all the others together.
   * @param {number} pid
   */
  threadCpuOf(pid) {
    const threads = this.threads.get(pid) ?? new Map();
    const others = [...threads].filter(([tid]) => tid !== pid).map(([, seconds]) => seconds);
    const busiestOther = Math.max(0, ...others);
    const otherSum = others.reduce((sum, seconds) => sum + seconds, 0);
    return { main: threads.get(pid) ?? 0, busiestOther, rest: otherSum - busiestOther };
  }

  /**
   * The process's CPU seconds (all threads) over its run: [epoch ms, CPU seconds] samples, in order.
   * @param {number} pid
   * @returns {readonly [number, number][]}
   */
  cpuSeriesOf(pid) {
    return this.series.get(pid) ?? [];
  }

  stop() {
    clearInterval(this.timer);
  }
}

/**
 * Stops every child still running when the bench is interrupted, by PID.
 * @param {() => Iterable<Child>} children
 */
export function stopChildrenOnSignal(children) {
  const onSignal = async (signal) => {
    await Promise.all([...children()].map((child) => child.stop()));
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
}

/**
 * The temp folder of one benchmark run: checks dist/ is built, snapshots the crawler into the folder,
 * removes the folder at exit (unless `keep`), and stops the run's children on SIGINT/SIGTERM.
 * @param {string} name part of the folder's name
 * @param {boolean} keep keep the agents' data and print where
 * @returns {Promise<{ dir: string, children: Set<Child> }>} add every child started to `children`
 */
export async function openWorkspace(name, keep) {
  if (!existsSync(join(CHECKOUT, "dist/bundle/main.js"))) {
    throw new Error("dist/ is missing: run `npm run build` first");
  }
  const dir = await mkdtemp(join(tmpdir(), `ubicrawl-bench-${name}-`));
  // The folder goes however the bench ends (a thrown error included), unless kept.
  process.once("exit", () => {
    if (keep) process.stderr.write(`data kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  });
  snapshotUbicrawl(join(dir, "ubicrawl"));
  const children = new Set();
  stopChildrenOnSignal(() => children);
  return { dir, children };
}
