import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";

/**
 * With `UBICRAWL_TEST_CPU=FILE` set, each test file's CPU seconds are appended to FILE as a JSON line
 * (`{"file", "cpuS", "wallS"}`): the worker's own CPU over the file, and that of the processes it
 * started and waited for (agents, CLI runs: /proc's cutime and cstime), so the system tier's files can
 * be ranked by what they cost the machine, not by their wall time, which waits inflate. Linux only;
 * without the variable it does nothing.
 */
const LOG = process.env.UBICRAWL_TEST_CPU;

/** This process's CPU seconds and its waited-for children's, from /proc/self/stat. */
function cpuSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command name (which may hold spaces), from the 3rd: utime is the 14th, stime, cutime, cstime follow.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / CLOCK_TICKS_PER_SECOND;
}

/** The kernel's USER_HZ, which /proc reports times in (100 on Linux's every architecture in use). */
const CLOCK_TICKS_PER_SECOND = 100;

if (LOG !== undefined) {
  let startCpu = 0;
  let startWall = 0;
  let file = "";
  beforeAll(() => {
    file = relative(process.cwd(), expect.getState().testPath ?? "");
    startCpu = cpuSeconds();
    startWall = performance.now();
  });
  afterAll(() => {
    const line = {
      file,
      cpuS: Math.round((cpuSeconds() - startCpu) * 100) / 100,
      wallS: Math.round(performance.now() - startWall) / 1000,
    };
    appendFileSync(LOG, `${JSON.stringify(line)}\n`);
  });
}
