import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";

/**
 * A CPU of its own for each agent on a machine with fewer cores than agents: every agent runs in a
 * cgroup of its own whose CFS bandwidth limit caps it at a share of one CPU (cgroup v2 `cpu.max`, or
 * v1 `cpu.cfs_quota_us`). With n agents capped at q CPUs each and n × q under the machine's cores, no
 * agent waits for another: each has q CPUs to itself, like a slower machine per agent. Needs the cpu
 * controller and the right to make groups at the hierarchy's root (root, in practice); the kernel's
 * throttling counters show whether an agent used its whole share (was CPU-bound).
 */

/** CFS period of every group, in µs (the kernel's default). */
const PERIOD_US = 100_000;

/** Groups made and not yet removed: removed at exit too (a run stopped by a signal). */
const live = new Set<CpuQuotaGroup>();
let exitHook = false;

/** Where a cgroup hierarchy with the cpu controller is mounted, and its version; undefined if none. */
function cpuHierarchy(): { version: 1 | 2; root: string } | undefined {
  const v2 = "/sys/fs/cgroup";
  const controllers = join(v2, "cgroup.controllers");
  if (existsSync(controllers) && readFileSync(controllers, "utf8").split(/\s+/).includes("cpu")) {
    return { version: 2, root: v2 };
  }
  for (const v1 of ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]) {
    if (existsSync(join(v1, "cpu.cfs_quota_us"))) return { version: 1, root: v1 };
  }
  return undefined;
}

/** Why CPU quotas cannot be set here, or undefined when they can: a group is made and removed to see. */
export function cpuQuotaUnavailable(): string | undefined {
  try {
    new CpuQuotaGroup(`ubicrawl-probe-${process.pid}`, 50).remove();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A cgroup capping the processes put into it at a share of one CPU. */
export class CpuQuotaGroup {
  /** The file a process's PID is written into to join the group (all its threads move with it). */
  readonly procsFile: string;
  private readonly dir: string;

  /** Creates the group `name` (unique among those alive at once), capped at `percent` % of one CPU. */
  constructor(name: string, percent: number) {
    if (!Number.isFinite(percent) || percent <= 0) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `a CPU quota must be a positive percentage, got ${percent}`,
      );
    }
    const hierarchy = cpuHierarchy();
    if (hierarchy === undefined) {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        "CPU quotas need the cgroup cpu controller, and none is mounted",
      );
    }
    this.dir = join(hierarchy.root, name);
    this.procsFile = join(this.dir, "cgroup.procs");
    const quotaUs = Math.round((PERIOD_US * percent) / 100);
    try {
      mkdirSync(this.dir);
      if (hierarchy.version === 2) writeFileSync(join(this.dir, "cpu.max"), `${quotaUs} ${PERIOD_US}`);
      else {
        writeFileSync(join(this.dir, "cpu.cfs_period_us"), String(PERIOD_US));
        writeFileSync(join(this.dir, "cpu.cfs_quota_us"), String(quotaUs));
      }
    } catch (error) {
      this.remove();
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `cannot set up the cgroup ${this.dir} (root needed): ${(error as Error).message}`,
      );
    }
    live.add(this);
    if (!exitHook) {
      exitHook = true;
      process.once("exit", () => {
        for (const group of live) group.remove();
      });
    }
  }

  /** Moves process `pid` (all its threads) into the group. */
  add(pid: number): void {
    writeFileSync(this.procsFile, String(pid));
  }

  /** The CFS periods the group's processes ran in, and those in which they used up their quota. */
  throttling(): { periods: number; throttledPeriods: number } {
    const stat = new Map(
      readFileSync(join(this.dir, "cpu.stat"), "utf8")
        .trim()
        .split("\n")
        .map((line) => {
          const [key, value] = line.split(" ");
          return [key, Number(value)] as const;
        }),
    );
    return { periods: stat.get("nr_periods") ?? 0, throttledPeriods: stat.get("nr_throttled") ?? 0 };
  }

  /** Removes the group; it must hold no process any more. */
  remove(): void {
    live.delete(this);
    try {
      rmdirSync(this.dir);
    } catch {
      // never created, or already gone
    }
  }
}
