import { afterEach, expect, it } from "vitest";
import {
  crawlMetrics,
  logEvent,
  servedPages,
  startWebFixture,
  traceRequests,
  type WebFixture,
} from "../agent/harness.js";
import { fetchedBy, startCluster } from "./cluster-harness.js";

/** `--ip-delay-ms` across the cluster (`--ip-limit cluster`): the address's authority spaces every agent's starts. */

const IP_DELAY_MS = 200;
/**
 * Agents space their requests as they send them; the test web stamps them as its event loop reads them,
 * later by the connection's set-up and its loop's delays (seen up to 41 ms on a loaded machine). Only
 * lower bounds are asserted.
 */
const TOLERANCE_MS = 50;

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

it("2 agents crawling hosts of one address start their requests there the IP delay apart, together", async () => {
  // Four of eight hosts on one address: with two agents, each owns some of them.
  fixture = await startWebFixture({
    hosts: 8,
    pages: 80,
    seed: 5,
    responseDelayMs: 5,
    ipGroups: [{ hosts: 4 }],
  });
  const truth = fixture.truth();
  const { model } = fixture.web;
  const ip = model.hosts[0]?.ip as string;
  const trace = traceRequests(fixture.web.recorder);
  const flags = ["--ip-limit", "cluster", "--max-per-ip", "2", "--ip-delay-ms", String(IP_DELAY_MS)];
  const agents = await startCluster(fixture, 2, flags);
  for (const agent of agents) {
    const result = await agent.process.waitForExit(120_000);
    expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
    expect(logEvent(result.stderr, "stopped")).toBeDefined();
  }
  trace.stop();

  expect(crawlMetrics(servedPages(fixture.web.recorder), truth.urls).coverage).toBe(1);
  const atIp = (url: string) =>
    model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1]?.ip === ip;
  const byAgent = await fetchedBy(agents);
  expect([...byAgent].filter(([, urls]) => urls.some(atIp))).toHaveLength(2);
  expect(fixture.web.recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
  const starts = trace.requests.filter((request) => request.ip === ip);
  const close = starts.flatMap((request, i) => {
    const gap = request.beganAtMs - (starts[i - 1]?.beganAtMs ?? Number.NEGATIVE_INFINITY);
    return gap < IP_DELAY_MS - TOLERANCE_MS
      ? [`${gap.toFixed(1)} ms: ${starts[i - 1]?.url} ${request.url}`]
      : [];
  });
  expect(close, `${starts.length} requests at ${ip}`).toEqual([]);
}, 180_000);

it("a Crawl-delay of one host spaces every agent's requests to its address, from soon after it is known", async () => {
  const crawlDelayMs = 500;
  fixture = await startWebFixture({
    hosts: 8,
    pages: 80,
    seed: 5,
    responseDelayMs: 5,
    ipGroups: [{ hosts: 4, crawlDelaySeconds: crawlDelayMs / 1000 }],
  });
  const truth = fixture.truth();
  const { model } = fixture.web;
  const ip = model.hosts[0]?.ip as string;
  const slowHost = model.hosts.find(
    (host) => host.ip === ip && host.crawlDelaySeconds === crawlDelayMs / 1000,
  );
  expect(slowHost).toBeDefined();
  const trace = traceRequests(fixture.web.recorder);
  const agents = await startCluster(fixture, 2, [
    "--ip-limit",
    "cluster",
    "--max-per-ip",
    "2",
    "--ip-delay-ms",
    "0",
  ]);
  for (const agent of agents) {
    const result = await agent.process.waitForExit(120_000);
    expect(result.code, `${agent.id} exit code; stderr:\n${result.stderr}`).toBe(0);
  }
  trace.stop();

  expect(crawlMetrics(servedPages(fixture.web.recorder), truth.urls).coverage).toBe(1);
  const atIp = (url: string) =>
    model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1]?.ip === ip;
  const byAgent = await fetchedBy(agents);
  expect([...byAgent].filter(([, urls]) => urls.some(atIp))).toHaveLength(2);
  // Known once the slow host's robots.txt is read, before its first page: reported to the address's
  // authority within a message's round trip (300 ms allowed), after which no two starts there come closer.
  const starts = trace.requests.filter((request) => request.ip === ip);
  const firstPage = starts.find((r) => r.host === slowHost?.name && !r.url.endsWith("/robots.txt"));
  const knownAtMs = (firstPage?.beganAtMs ?? Number.POSITIVE_INFINITY) + 300;
  const later = starts.filter((request) => request.beganAtMs >= knownAtMs);
  expect(later.length).toBeGreaterThan(10);
  expect(new Set(later.map((request) => request.host)).size).toBeGreaterThan(1);
  const close = later.flatMap((request, i) => {
    const gap = request.beganAtMs - (later[i - 1]?.beganAtMs ?? Number.NEGATIVE_INFINITY);
    return gap < crawlDelayMs - TOLERANCE_MS
      ? [`${gap.toFixed(1)} ms: ${later[i - 1]?.url} ${request.url}`]
      : [];
  });
  expect(close, `${later.length} requests at ${ip} after the Crawl-delay was known`).toEqual([]);
}, 180_000);
