// A CPU of its own for each agent on a machine with fewer cores than agents: every agent runs in a
// cgroup of its own whose CFS bandwidth limit caps it at a share of one CPU (cgroup v2 `cpu.max`, or
// v1 `cpu.cfs_quota_us`). With n agents capped at q CPUs each and n × q well under the machine's cores,
// no agent waits for another: each has q CPUs to itself, like a slower machine per agent, and the
// test web keeps the rest. Needs root (or a delegated cgroup) and the cpu controller; the throttling
// counters the kernel keeps show whether an agent used its whole share (was CPU-bound).
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** CFS period of every group, in µs (the kernel's default). */
const PERIOD_US = 100_000;

/** Groups made and not yet removed: removed at exit too (a bench stopped by a signal). */
const live = new Set();
process.once("exit", () => {
  for (const group of live) group.remove();
});

/** Where a cgroup hierarchy with the cpu controller is mounted, and its version. */
function cpuHierarchy() {
  const v2 = "/sys/fs/cgroup";
  const controllers = join(v2, "cgroup.controllers");
  if (existsSync(controllers) && readFileSync(controllers, "utf8").split(/\s+/).includes("cpu")) {
    return { version: 2, root: v2 };
  }
  for (const v1 of ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]) {
    if (existsSync(join(v1, "cpu.cfs_quota_us"))) return { version: 1, root: v1 };
  }
  throw new Error(
    "--cpu-quota needs the cgroup cpu controller (v2 /sys/fs/cgroup with cpu enabled, or v1 " +
      "/sys/fs/cgroup/cpu), and none was found",
  );
}

/** A cgroup capping the processes put into it at a share of one CPU. */
export class CpuQuotaGroup {
  /**
   * Creates the group `name` under the cpu hierarchy, capped at `percent` % of one CPU.
   * @param {string} name unique among the groups alive at once
   * @param {number} percent 1 … 100 × cores
   */
  constructor(name, percent) {
    const { version, root } = cpuHierarchy();
    this.version = version;
    this.dir = join(root, name);
    const quotaUs = Math.round((PERIOD_US * percent) / 100);
    try {
      mkdirSync(this.dir);
      if (version === 2) writeFileSync(join(this.dir, "cpu.max"), `${quotaUs} ${PERIOD_US}`);
      else {
        writeFileSync(join(this.dir, "cpu.cfs_period_us"), String(PERIOD_US));
        writeFileSync(join(this.dir, "cpu.cfs_quota_us"), String(quotaUs));
      }
    } catch (error) {
      this.remove();
      throw new Error(`--cpu-quota: cannot set up the cgroup ${this.dir} (root needed): ${error.message}`);
    }
    /** The file a process writes its PID into to join the group (all its threads move with it). */
    this.procsFile = join(this.dir, "cgroup.procs");
    live.add(this);
  }

  /**
   * How often the group hit its cap: the CFS periods its processes ran in, and those in which they
   * used up their quota and were held back until the next one.
   * @returns {{ periods: number, throttledPeriods: number }}
   */
  throttling() {
    const stat = new Map(
      readFileSync(join(this.dir, "cpu.stat"), "utf8")
        .trim()
        .split("\n")
        .map((line) => {
          const [key, value] = line.split(" ");
          return [key, Number(value)];
        }),
    );
    return { periods: stat.get("nr_periods") ?? 0, throttledPeriods: stat.get("nr_throttled") ?? 0 };
  }

  /** Removes the group; it must hold no process any more (its agent exited). */
  remove() {
    live.delete(this);
    try {
      rmdirSync(this.dir);
    } catch {
      // never created, or already gone
    }
  }
}
