import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const SCALING = fileURLToPath(new URL("../../bench/scaling.mjs", import.meta.url));

interface ScalingRow {
  label: string;
  agents: number;
  dedup: string;
  ok: boolean;
  pages: number;
  pagesPerSecond: number;
  ratioToBaseline: number;
  cpuMsPerPage: number;
  mainThreadCpuMsPerPage: number;
  warcWorkerCpuMsPerPage: number;
  otherThreadsCpuMsPerPage: number;
  serverCpuMsPerPage: number;
  machinePagesPerSecond: number;
  messagesPerPage: { urls: number; digests: number; ip: number };
  peakRssMibByAgent: number[];
  tail: { fromSeconds: number; seconds: number; shareOfCrawl: number };
  coverage: number;
  biggestHost: {
    host: string;
    pages: number;
    firstSeconds: number;
    requests: number;
    seconds: number;
    medianGapMs: number;
  };
  deadHostsMet: number;
}

interface ScalingReport {
  shape: { hosts: number; biggest: { host: string; urls: number; share: number }; deadHosts: number };
  truthUrls: number;
  results: ScalingRow[];
}

describe("bench/scaling.mjs", () => {
  it("crawls one heavy-tailed web with 1 and 2 agents, defaults and --dedup off, and reports each crawl's tail", async () => {
    const { stdout } = await run(process.execPath, [
      ...[SCALING, "--hosts", "12", "--pages", "480", "--biggest-host-percent", "30", "--gone-hosts", "4"],
      "--json",
    ]);
    const report = JSON.parse(stdout) as ScalingReport;
    expect(report.shape.deadHosts).toBe(4);
    expect(report.shape.biggest.share).toBeGreaterThan(0.2);
    expect(report.results.map((r) => [r.agents, r.dedup])).toEqual([
      [1, "cluster"],
      [1, "off"],
      [2, "cluster"],
      [2, "off"],
    ]);
    expect(report.results[0]?.ratioToBaseline).toBe(1);
    for (const r of report.results) {
      expect(r.ok, r.label).toBe(true);
      expect(r.coverage, r.label).toBe(1);
      expect(r.peakRssMibByAgent).toHaveLength(r.agents);
      expect(r.cpuMsPerPage).toBeGreaterThan(0);
      // The thread split misses at most a sample interval of each agent's CPU: never more than the whole.
      const threads = r.mainThreadCpuMsPerPage + r.warcWorkerCpuMsPerPage + r.otherThreadsCpuMsPerPage;
      expect(r.mainThreadCpuMsPerPage).toBeGreaterThan(0);
      expect(threads).toBeLessThanOrEqual(r.cpuMsPerPage + 1e-9);
      expect(r.serverCpuMsPerPage).toBeGreaterThan(0);
      expect(r.machinePagesPerSecond).toBeGreaterThan(0);
      expect(r.tail.seconds).toBeGreaterThanOrEqual(0);
      expect(r.tail.shareOfCrawl).toBeLessThan(1);
      // Every URL of the biggest host was fetched once (the crawl covers the truth without overlap).
      expect(r.biggestHost.host).toBe(report.shape.biggest.host);
      expect(r.biggestHost.pages).toBeGreaterThanOrEqual(report.shape.biggest.urls);
      expect(r.biggestHost.firstSeconds).toBeGreaterThan(0);
      expect(r.biggestHost.firstSeconds).toBeLessThan(r.tail.fromSeconds + r.tail.seconds);
      expect(r.biggestHost.requests).toBeLessThanOrEqual(r.biggestHost.pages);
      expect(r.deadHostsMet).toBeLessThanOrEqual(4);
      // Messages between agents: none for one agent; two exchange URLs, and digests only with cluster dedup.
      if (r.agents === 1) expect(r.messagesPerPage, r.label).toEqual({ urls: 0, digests: 0, ip: 0 });
      else {
        expect(r.messagesPerPage.urls, r.label).toBeGreaterThan(0);
        if (r.dedup === "off") expect(r.messagesPerPage.digests, r.label).toBe(0);
        else expect(r.messagesPerPage.digests, r.label).toBeGreaterThan(0);
      }
    }
  }, 180_000);
});
