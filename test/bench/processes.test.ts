import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTruth } from "../../bench/lib/crawl-metrics.mjs";
import {
  type Child,
  PeakRssSampler,
  processCpuSeconds,
  reapedChildrenCpuSeconds,
  snapshotUbicrawl,
  startTestWebProcess,
  UBICRAWL,
} from "../../bench/lib/processes.mjs";

let dir: string;
let started: Child | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-bench-test-"));
});
afterEach(async () => {
  await started?.stop();
  started = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe("the test web process", () => {
  it("serves on loopback, writes its files, and its CPU and peak RSS are accounted", async () => {
    const sampler = new PeakRssSampler(20);
    const cpuBefore = reapedChildrenCpuSeconds();
    const { child, port, files } = await startTestWebProcess(dir, { seed: 1, hosts: 10, pages: 200 });
    started = child;
    sampler.watch(child.pid);
    expect(port).toBeGreaterThan(0);
    const truth = await readTruth(files.truth);
    expect(truth.size).toBeGreaterThan(0);
    for (const url of truth) expect(new URL(url).port).toBe(String(port));
    expect(existsSync(files.hosts) && existsSync(files.seeds)).toBe(true);
    // The hosts file maps every name to loopback only.
    const names = (await readFile(files.hosts, "utf8"))
      .split("\n")
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(names.length).toBeGreaterThan(0);
    for (const entry of names) expect(entry).toMatch(/^127\./);
    sampler.sample();
    expect(sampler.peakOf(child.pid)).toBeGreaterThan(1024 * 1024);
    expect(child.done).toBe(false);
    expect(await child.stop()).toBe(0);
    expect(child.done).toBe(true);
    expect(child.stderrLines.some((line) => /^served \d+ requests/.test(line))).toBe(true);
    // A node process that built a web and computed its truth used some CPU: counted once reaped.
    expect(reapedChildrenCpuSeconds()).toBeGreaterThan(cpuBefore);
    sampler.stop();
  });

  it("rejects waiting for a line the child never prints before it exits", async () => {
    const { child } = await startTestWebProcess(dir, { seed: 1, hosts: 10, pages: 100 });
    started = child;
    const waiting = child.waitForLine(/never printed/, 30_000);
    await child.stop();
    await expect(waiting).rejects.toThrow(/exited before printing/);
  });

  it("runs from a snapshot of the build once one is taken", async () => {
    const bin = snapshotUbicrawl(join(dir, "snapshot"));
    expect(bin).not.toBe(UBICRAWL);
    const { child, port } = await startTestWebProcess(dir, { seed: 1, hosts: 10, pages: 100 });
    started = child;
    expect(child.process.spawnargs[1]).toBe(bin);
    expect(port).toBeGreaterThan(0);
    expect(await child.stop()).toBe(0);
  });
});

describe("PeakRssSampler's thread CPU", () => {
  it("tells a process's main thread from its busiest other thread", async () => {
    // A worker thread spins for 400 ms of CPU while the main thread only waits for it; it then stays,
    // idle, until the test has sampled it (a thread's CPU is read only while it lives: one that ended
    // between two samples of the sampler's interval was never seen, and the test failed once on CI).
    const script = `
      const { Worker } = require("node:worker_threads");
      const worker = new Worker(
        "const t = process.cpuUsage(); while (process.cpuUsage(t).user < 400000) {}" +
          "require('node:worker_threads').parentPort.postMessage('spun'); setInterval(() => {}, 1000);",
        { eval: true },
      );
      worker.on("message", () => console.log("done"));
    `;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const sampler = new PeakRssSampler(1000);
      sampler.watch(child.pid as number);
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("done")) resolve();
        });
        child.once("exit", () => reject(new Error("the child exited early")));
      });
      sampler.sample();
      sampler.stop();
      const { main, busiestOther, rest } = sampler.threadCpuOf(child.pid as number);
      expect(busiestOther).toBeGreaterThanOrEqual(0.35);
      expect(main).toBeLessThan(busiestOther);
      // The threads add up to the process (the two reads are a moment apart).
      expect(main + busiestOther + rest).toBeLessThanOrEqual(processCpuSeconds(child.pid as number) + 0.05);
    } finally {
      child.kill();
    }
  });
});
