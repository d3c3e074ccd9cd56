import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CpuQuotaGroup } from "../../bench/lib/cpu-quota.mjs";
import { processCpuSeconds, startTestWebProcess } from "../../bench/lib/processes.mjs";

/** A cgroup capped at `percent` % of a CPU, or the error saying why this machine cannot make one. */
function tryGroup(name: string, percent: number): CpuQuotaGroup | Error {
  try {
    return new CpuQuotaGroup(`${name}-${process.pid}`, percent);
  } catch (error) {
    return error as Error;
  }
}

/** Whether this machine lets the tests make a cgroup: if not, they are skipped, visibly. */
const probe = tryGroup("ubicrawl-test-probe", 50);
if (!(probe instanceof Error)) probe.remove();
const cgroups = !(probe instanceof Error);

let dir: string;
const groups: CpuQuotaGroup[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-cpu-quota-test-"));
});
afterEach(async () => {
  for (const group of groups.splice(0)) group.remove();
  await rm(dir, { recursive: true, force: true });
});

describe("CpuQuotaGroup (bench/cluster --cpu-quota)", () => {
  it.runIf(!cgroups)("says plainly, where no cgroup can be made, why CPU quotas cannot work here", () => {
    expect((probe as Error).message).toMatch(/cgroup/);
  });

  it.skipIf(!cgroups)(
    "caps a busy process at its share of one CPU and counts the periods it was held back",
    async () => {
      const group = tryGroup("ubicrawl-test-spin", 20);
      if (group instanceof Error) throw group;
      groups.push(group);
      const spinner = spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });
      try {
        const pid = spinner.pid as number;
        writeFileSync(group.procsFile, String(pid));
        const cpuBefore = processCpuSeconds(pid);
        await sleep(1500);
        const cpu = processCpuSeconds(pid) - cpuBefore;
        // 20 % of a CPU over 1.5 s is 0.3 s; unbounded it would be ~1.5 s.
        expect(cpu).toBeLessThan(0.6);
        const { periods, throttledPeriods } = group.throttling();
        expect(periods).toBeGreaterThan(0);
        expect(throttledPeriods).toBeGreaterThan(0);
        expect(throttledPeriods).toBeLessThanOrEqual(periods);
      } finally {
        spinner.kill();
        await new Promise((resolve) => spinner.once("exit", resolve));
      }
      group.remove();
      expect(existsSync(group.procsFile)).toBe(false);
    },
  );

  it.skipIf(!cgroups)("starts a bench child inside its group from its first instruction", async () => {
    const group = tryGroup("ubicrawl-test-child", 100);
    if (group instanceof Error) throw group;
    groups.push(group);
    const { child } = await startTestWebProcess(
      dir,
      { seed: 1, hosts: 10, pages: 100 },
      { cgroupProcs: group.procsFile },
    );
    try {
      // The PID the bench holds is node's own (the wrapper shell exec'd it), and it is in the group.
      expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8")).toContain("testweb");
      const members = readFileSync(group.procsFile, "utf8").trim().split("\n").map(Number);
      expect(members).toContain(child.pid);
    } finally {
      expect(await child.stop()).toBe(0);
    }
  });
});
