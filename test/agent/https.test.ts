import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import {
  agentDataDir,
  crawlMetrics,
  type ExitResult,
  logEvent,
  logRecords,
  readCrawlLogOf,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "./harness.js";

/**
 * The built-in test web over HTTPS, its certificates signed by a throwaway CA: an agent given that CA
 * with --ca-file crawls all of it; an agent without it fetches nothing, fails each seed host's URL as
 * UBI_ERR_TLS with the reason logged, and never falls back to plain HTTP.
 */

let fixture: WebFixture;
let untrusting: ExitResult;
let trusting: ExitResult;
let servedWithoutCa: number;

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 5, hosts: 8, pages: 160, trap: false, scheme: "https" });
  untrusting = await spawnAgent(fixture, { id: "untrusting" }).waitForExit(60_000);
  servedWithoutCa = fixture.web.recorder.totalServed;
  trusting = await spawnAgent(fixture, { id: "trusting", flags: ["--ca-file", fixture.caFile] }).waitForExit(
    120_000,
  );
}, 200_000);

afterAll(async () => {
  await fixture?.stop();
});

describe("a test web served over HTTPS", () => {
  it("is crawled whole by an agent trusting its CA (--ca-file)", async () => {
    expect(trusting.code, trusting.stderr).toBe(0);
    const truth = fixture.truth();
    expect(truth.urls.every((url) => url.startsWith("https://"))).toBe(true);
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
    const log = await readCrawlLogOf(agentDataDir(fixture, { id: "trusting" }));
    expect(log.filter((entry) => entry.error === ErrorCode.TlsFailed)).toEqual([]);
  });

  it("is not crawled at all without it: a tls error per seed host, with its reason, no plain HTTP", async () => {
    expect(untrusting.code).toBe(1);
    expect(servedWithoutCa).toBe(0);
    const seedHosts = fixture.web.seeds.map((seed) => new URL(seed).host);
    expect(logEvent(untrusting.stderr, "stopped")).toMatchObject({
      pagesFetched: 0,
      errors: { [ErrorCode.TlsFailed]: seedHosts.length },
    });
    const failures = logRecords(untrusting.stderr).filter((record) => record.event === "tls-failed");
    expect(failures.map((record) => record.host).sort()).toEqual([...seedHosts].sort());
    for (const failure of failures) expect(String(failure.reason)).toMatch(/certificate/);
    const log = await readCrawlLogOf(agentDataDir(fixture, { id: "untrusting" }));
    expect(log).toHaveLength(seedHosts.length);
    for (const entry of log) {
      expect(entry.url.startsWith("https://")).toBe(true);
      expect(entry).toMatchObject({ status: 0, error: ErrorCode.TlsFailed });
      expect(String(entry.reason)).toMatch(/certificate/);
    }
    expect(logEvent(untrusting.stderr, "failed")?.msg).toMatch(/--ca-file/);
  });
});
