import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import {
  agentDataDir,
  crawlMetrics,
  type ExitResult,
  logEvent,
  logRecords,
  readCrawlLogOf,
  readWarcRecords,
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

describe("HTTP/2 (--http2)", () => {
  let h2: WebFixture | undefined;
  afterAll(async () => {
    await h2?.stop();
  });

  it("is spoken with a server offering it, and only with --http2; the WARC keeps HTTP/1.1-form records", async () => {
    h2 = await startWebFixture({ seed: 5, hosts: 8, pages: 160, trap: false, scheme: "https", http2: true });
    const truth = h2.truth();
    const withH2 = await spawnAgent(h2, { id: "h2", flags: ["--ca-file", h2.caFile, "--http2"] }).waitForExit(
      120_000,
    );
    expect(withH2.code, withH2.stderr).toBe(0);
    expect(crawlMetrics(servedPages(h2.web.recorder), truth.urls).missing).toEqual([]);
    expect([...h2.web.recorder.servedByVersion().keys()]).toEqual(["2.0"]);
    const records = await readWarcRecords(agentDataDir(h2, { id: "h2" }));
    const response = records.find((record) => record.type === "response");
    expect(Buffer.from(response?.block ?? []).toString("latin1")).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    h2.web.recorder.reset();
    const without = await spawnAgent(h2, { id: "h1", flags: ["--ca-file", h2.caFile] }).waitForExit(120_000);
    expect(without.code, without.stderr).toBe(0);
    expect(crawlMetrics(servedPages(h2.web.recorder), truth.urls).missing).toEqual([]);
    expect([...h2.web.recorder.servedByVersion().keys()]).toEqual(["1.1"]);
  }, 200_000);
});
