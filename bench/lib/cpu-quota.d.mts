/** A cgroup capping the processes put into it at a share of one CPU (CFS bandwidth control). */
export class CpuQuotaGroup {
  /** Creates the group `name`, capped at `percent` % of one CPU; throws saying why it cannot. */
  constructor(name: string, percent: number);
  /** The cgroup version in use (2: `cpu.max`, 1: `cpu.cfs_quota_us`). */
  readonly version: 1 | 2;
  /** The group's folder. */
  readonly dir: string;
  /** The file a process writes its PID into to join the group. */
  readonly procsFile: string;
  /** CFS periods the group's processes ran in, and those in which they used up their quota. */
  throttling(): { periods: number; throttledPeriods: number };
  /** Removes the group once it holds no process. */
  remove(): void;
}
