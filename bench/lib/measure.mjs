// Measuring one crawl of a comparison bench (ubicrawl beside another crawler on the same test web): the
// crawler's processes are awaited for wall time, CPU (kernel accounting of reaped children) and peak
// RSS; what they fetched is measured against the truth after ubicrawl's URL normalization.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { reapedChildrenCpuSeconds } from "./processes.mjs";
import { MIB } from "./report.mjs";

/**
 * Waits for `started` (children of this process, already running, nothing else of this process's
 * exiting meanwhile) to exit. Wall time runs from the first start to the last exit; CPU is theirs
 * exactly, read across their exits; peak RSS is the largest of theirs.
 * @param {string} name shown in logs
 * @param {readonly { name: string, pid: number, startedAtMs: number, exited: Promise<number | string>, stop(): unknown, stderrLines: string[] }[]} started
 * @param {{ children: Set<unknown>, sampler: { watch(pid: number): void, peakOf(pid: number): number }, timeoutS: number, log: (text: string) => void, okExitCodes?: readonly (number | string)[] }} context
 * @returns {Promise<{ exitCode: number | string, wallSeconds: number, cpuSeconds: number, peakRssMib: number }>}
 */
export async function measureChildren(name, started, context) {
  const { children, sampler, timeoutS, log } = context;
  const ok = new Set([0, ...(context.okExitCodes ?? [])]);
  const cpuBefore = reapedChildrenCpuSeconds();
  const startedAtMs = Math.min(...started.map((child) => child.startedAtMs));
  for (const child of started) {
    children.add(child);
    sampler.watch(child.pid);
  }
  const timer = setTimeout(() => {
    log(`${name}: no end after ${timeoutS} s, stopping it`);
    for (const child of started) child.stop();
  }, timeoutS * 1000);
  const codes = await Promise.all(started.map((child) => child.exited));
  clearTimeout(timer);
  const wallSeconds = (performance.now() - startedAtMs) / 1000;
  const cpuSeconds = reapedChildrenCpuSeconds() - cpuBefore;
  for (const [i, code] of codes.entries()) {
    const child = started[i];
    children.delete(child);
    if (!ok.has(code)) log(`${child.name} exited with ${code}:\n${child.stderrLines.slice(-30).join("\n")}`);
  }
  const exitCode = codes.find((code) => !ok.has(code)) ?? 0;
  const peakRssMib = Math.max(...started.map((child) => sampler.peakOf(child.pid))) / MIB;
  return { exitCode, wallSeconds, cpuSeconds, peakRssMib };
}

/**
 * Figures of a run from the URLs it fetched (a server answered, repeats included), against `truth`.
 * @template {{ wallSeconds: number, cpuSeconds: number }} R
 * @param {R} run
 * @param {readonly string[]} fetchedUrls
 * @param {ReadonlySet<string>} truth canonical URLs
 * @param {(url: string) => string | null | undefined} normalize ubicrawl's normalizeUrl
 */
export function fetchFigures(run, fetchedUrls, truth, normalize) {
  const canonical = new Set();
  for (const url of fetchedUrls) canonical.add(normalize(url) ?? url);
  let covered = 0;
  for (const url of truth) if (canonical.has(url)) covered++;
  let extra = 0;
  for (const url of canonical) if (!truth.has(url)) extra++;
  const pages = fetchedUrls.length;
  return {
    ...run,
    pages,
    pagesPerSecond: pages / run.wallSeconds,
    cpuSecondsPer1000Pages: (run.cpuSeconds * 1000) / Math.max(1, pages),
    cpuCores: run.cpuSeconds / run.wallSeconds,
    distinctUrls: canonical.size,
    coverage: covered / truth.size,
    extraUrls: extra,
  };
}

/**
 * URLs of an agent's crawl log that a server answered (status > 0), in log order.
 * @param {string} path crawl.log
 * @returns {string[]}
 */
export function crawlLogFetchedUrls(path) {
  const urls = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const entry = JSON.parse(line);
    if (entry.status > 0) urls.push(entry.url);
  }
  return urls;
}

/**
 * Starts another crawler (`command args`), shaped like the bench's `Child`: pid, start time, exit,
 * stop by its own PID, and the last 20 kB of its stderr (some crawlers print a stack per failure).
 * @param {string} command
 * @param {readonly string[]} args
 */
export function spawnCrawler(command, args) {
  const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
  const handle = {
    name: command,
    pid: child.pid,
    startedAtMs: performance.now(),
    /** @type {string[]} */
    stderrLines: [],
    exited: new Promise((resolveExit) => child.once("close", (code, signal) => resolveExit(code ?? signal))),
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return handle.exited;
    },
  };
  let tail = "";
  child.stderr.on("data", (chunk) => {
    tail = (tail + chunk).slice(-20_000);
    handle.stderrLines = tail.split("\n");
  });
  return handle;
}
