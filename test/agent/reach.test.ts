import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HostInfo } from "../../src/testweb/index.js";
import {
  agentDataDir,
  hostOf,
  logEvent,
  logText,
  readCrawlLogOf,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
} from "./harness.js";

/** What an agent may reach: the network policy (--allow-net), --scope, and robots.txt on the seeds. */

let fixture: WebFixture;

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 5, hosts: 20, pages: 600 });
});

beforeEach(() => {
  fixture.web.recorder.reset();
});

afterAll(async () => {
  await fixture?.stop();
});

describe("without --allow-net", () => {
  it("refuses the loopback test web: no request reaches it, each seed fails with ADDRESS_FORBIDDEN", async () => {
    const options = { id: "fenced", allowLoopback: false };
    const result = await spawnAgent(fixture, options).waitForExit(20_000);
    // A crawl that fetched nothing fails, saying why and which flag fixes it.
    expect(result.code, result.stderr).toBe(1);
    expect(logEvent(result.stderr, "stopped")).toMatchObject({
      reason: "done",
      errors: { UBI_ERR_ADDRESS_FORBIDDEN: fixture.web.seeds.length },
    });
    expect(logEvent(result.stderr, "failed")).toMatchObject({
      level: "fatal",
      code: "UBI_ERR_NOTHING_FETCHED",
    });
    expect(logText(result.stderr)).toMatch(
      /^fatal: .*refused by the network policy.*--allow-net CIDR.*\[UBI_ERR_NOTHING_FETCHED\]$/m,
    );
    expect(fixture.web.recorder.totalServed).toBe(0);
    const log = await readCrawlLogOf(agentDataDir(fixture, options));
    expect(log.map((entry) => entry.url).sort()).toEqual([...fixture.web.seeds].sort());
    for (const entry of log) {
      expect(entry).toMatchObject({ status: 0, bytes: 0, error: "UBI_ERR_ADDRESS_FORBIDDEN" });
    }
  });
});

describe("--scope", () => {
  it("with one host's name, fetches that host only", async () => {
    const seed = fixture.web.seeds[0] as string;
    const scope = hostOf(seed);
    const options = { id: "scoped", flags: ["--scope", scope] };
    const result = await spawnAgent(fixture, options).waitForExit(20_000);
    expect(result.code, result.stderr).toBe(0);
    expect(logEvent(result.stderr, "stopped")?.dropped).toMatchObject({ scope: expect.any(Number) });
    const { recorder } = fixture.web;
    const servedHosts = new Set([...recorder.servedCounts().keys()].map(hostOf));
    expect([...servedHosts]).toEqual([scope]);
    expect(recorder.robotsFetches(scope)).toBe(1);
    // Within the host, a subset of the broad crawl's pages: links through other hosts are not followed.
    const truth = new Set(fixture.truth().urls.filter((url) => hostOf(url) === scope));
    const pages = [...servedPages(recorder).keys()];
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.filter((url) => !truth.has(url))).toEqual([]);
    const log = await readCrawlLogOf(agentDataDir(fixture, options));
    expect(log.every((entry) => hostOf(entry.url) === scope)).toBe(true);
    expect(log.length).toBe(pages.length);
  });
});

describe("robots.txt on the seeds", () => {
  it("ends a crawl whose only seed is disallowed after fetching robots.txt and trying /sitemap.xml", async () => {
    const { model, port, recorder } = fixture.web;
    // A host without a sitemap of its own (whose pages the agent would crawl).
    const ruled = model.hosts.find((host) => host.robots === "rules" && host.hidden === 0) as HostInfo;
    expect(ruled).toBeDefined();
    const seed = `http://${ruled.name}:${port}/private/secret.html`;
    const options = { id: "denied", seeds: [seed] };
    const result = await spawnAgent(fixture, options).waitForExit(20_000);
    expect(result.code, result.stderr).toBe(0);
    expect(logEvent(result.stderr, "stopped")?.dropped).toMatchObject({ robots: 1 });
    const served = [...recorder.servedCounts().keys()];
    const sitemap = `http://${ruled.name}:${port}/sitemap.xml`;
    expect(served).toEqual([`http://${ruled.name}:${port}/robots.txt`, sitemap]);
    // The seed itself is never asked for: only the sitemap is, which the test web does not have.
    const log = await readCrawlLogOf(agentDataDir(fixture, options));
    expect(log.map((entry) => [entry.url, entry.status, entry.sitemap])).toEqual([[sitemap, 404, true]]);
  });
});
