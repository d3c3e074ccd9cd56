import type { ChildProcess } from "node:child_process";
import type { AgentFlagValues } from "../../src/launch/index.js";
import type { LogRecord } from "../../src/logging/index.js";

/** The `ubicrawl` command of this checkout. */
export const UBICRAWL: string;

/** Copies the built crawler into `dir`; children started afterwards run the copy. Returns its bin. */
export function snapshotUbicrawl(dir: string): string;

/** How a child is started beyond its arguments. */
export interface SpawnOptions {
  /** Runs the child under `taskset -c core`. */
  readonly core?: number;
  /** The `cgroup.procs` file of a cgroup the child runs in from its start (see cpu-quota.mjs). */
  readonly cgroupProcs?: string;
  /** Flags for node itself (e.g. `--cpu-prof`). */
  readonly nodeArgs?: readonly string[];
}

/** A started `bin/ubicrawl` child (src/launch's `UbicrawlProcess`) with its times and its exit as one value. */
export class Child {
  constructor(name: string, args: readonly string[], options?: SpawnOptions);
  readonly name: string;
  /** The CPU it is pinned to, if any. */
  readonly core: number | undefined;
  readonly stderrLines: string[];
  readonly startedAtMs: number;
  readonly startedAtEpochMs: number;
  readonly exitedAtMs: number | undefined;
  readonly exitedAtEpochMs: number | undefined;
  readonly process: ChildProcess;
  readonly pid: number;
  /** Exit code or signal name, once reaped and stderr read. */
  readonly exited: Promise<number | string>;
  readonly done: boolean;
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** The first log record of `event` on stderr. */
  waitForEvent(event: string, timeoutMs: number): Promise<LogRecord>;
  stop(): Promise<number | string>;
}

/** Starts `ubicrawl testweb` writing its hosts file, seeds, truth (and, over https, CA) into `dir`. */
export function startTestWebProcess(
  dir: string,
  web: {
    seed: number;
    hosts: number;
    pages: number;
    scheme?: "http" | "https";
    http2?: boolean;
    /** `--max-articles-per-host` (the test web's default when left out). */
    maxArticlesPerHost?: number;
    /** `--biggest-host-percent`: the biggest host's share of the articles. */
    biggestHostPercent?: number;
    /** `--gone-hosts`: dead hosts linked from pages. */
    goneHosts?: number;
  },
  options?: SpawnOptions,
): Promise<{
  child: Child;
  port: number;
  files: { hosts: string; seeds: string; truth: string; ca: string };
}>;
/** Starts `ubicrawl agent --id id …args`. */
export function startAgentProcess(id: string, args: readonly string[], options?: SpawnOptions): Child;
/** The CPUs this process may run on, numbered as `taskset -c` takes them. */
export function allowedCores(): number[];
/** CPU seconds (user + system) of a running process so far, all its threads. */
export function processCpuSeconds(pid: number): number;
/** CPU seconds (user + system) of this process's reaped children. */
export function reapedChildrenCpuSeconds(): number;

/** Samples VmHWM and per-thread CPU of watched PIDs. */
export class PeakRssSampler {
  constructor(intervalMs?: number);
  watch(pid: number): void;
  sample(): void;
  peakOf(pid: number): number;
  /** CPU seconds of the main thread, the busiest other thread and all the others, at the last sample. */
  threadCpuOf(pid: number): { main: number; busiestOther: number; rest: number };
  /** The process's CPU seconds (all threads) over its run: [epoch ms, CPU seconds] samples, in order. */
  cpuSeriesOf(pid: number): readonly [number, number][];
  stop(): void;
}
/** Stops the given children by PID on SIGINT/SIGTERM, then exits. */
export function stopChildrenOnSignal(children: () => Iterable<Child>): void;

/** The temp folder of one benchmark run (see processes.mjs). */
export function openWorkspace(name: string, keep: boolean): Promise<{ dir: string; children: Set<Child> }>;

/**
 * The flags every bench agent runs with (hosts file, loopback allowed, no delay, exit when done,
 * `--dedup local`), `maxActiveHosts` (the agent's default when undefined), `overrides` on top.
 */
export function benchAgentFlags(
  hostsFile: string,
  maxActiveHosts: number | undefined,
  overrides?: AgentFlagValues,
): string[];
