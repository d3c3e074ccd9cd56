import { afterEach, expect, it } from "vitest";
import { buildModel, type RunningTestWeb, startTestWeb } from "../../src/testweb/index.js";
import { fetchHost } from "./helpers.js";

let web: RunningTestWeb | undefined;

afterEach(async () => {
  await web?.stop();
  web = undefined;
});

it("puts each group's hosts on one address of its own, and no other host there", () => {
  const model = buildModel({
    seed: 2,
    hosts: 40,
    pages: 2000,
    ipGroups: [{ hosts: 10 }, { hosts: 5, requestsPerSecond: 3 }],
  });
  const first = model.hosts.slice(0, 10).map((host) => host.ip);
  const second = model.hosts.slice(10, 15).map((host) => host.ip);
  expect(new Set(first).size).toBe(1);
  expect(new Set(second).size).toBe(1);
  expect(first[0]).not.toBe(second[0]);
  const others = model.hosts.slice(15).map((host) => host.ip);
  expect(others).not.toContain(first[0]);
  expect(others).not.toContain(second[0]);
  expect([...model.rateLimits]).toEqual([[second[0], 3]]);
  expect(() => buildModel({ hosts: 10, pages: 200, ipGroups: [{ hosts: 11 }] })).toThrow(/ipGroups/);
  expect(() => buildModel({ hosts: 10, pages: 200, ipGroups: [{ hosts: 1 }] })).toThrow(/ipGroups/);
});

it("answers 429 with Retry-After beyond a group's rate, and records requests at once and gaps per address", async () => {
  web = await startTestWeb({
    seed: 2,
    hosts: 20,
    pages: 1000,
    ipGroups: [{ hosts: 4, requestsPerSecond: 3 }],
  });
  const hosts = web.model.hosts.slice(0, 4);
  const ip = hosts[0]?.ip as string;
  const answers = await Promise.all(
    hosts.flatMap((host) => [
      fetchHost(web as RunningTestWeb, host.name, "/"),
      fetchHost(web as RunningTestWeb, host.name, "/robots.txt"),
    ]),
  );
  const statuses = answers.map((answer) => answer.status);
  expect(statuses.filter((status) => status === 429)).toHaveLength(5);
  expect(web.recorder.refusedAtIp(ip)).toBe(5);
  expect(web.recorder.maxConcurrencyAtIp(ip)).toBeGreaterThanOrEqual(1);
  expect(web.recorder.maxConcurrencyAtIp("127.0.0.1")).toBe(0);
  expect(web.recorder.minGapAtIp(ip)).toBeGreaterThanOrEqual(0);
  // Refused requests are no pages served.
  const served = [...web.recorder.servedCounts().values()].reduce((sum, n) => sum + n, 0);
  expect(served).toBe(3);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect((await fetchHost(web, hosts[0]?.name as string, "/")).status).toBe(200);
});

it("gives one host of a group a robots.txt asking for the group's Crawl-delay", () => {
  const model = buildModel({
    seed: 2,
    hosts: 40,
    pages: 2000,
    ipGroups: [{ hosts: 10, crawlDelaySeconds: 2 }],
  });
  const asking = model.hosts.slice(0, 10).filter((host) => host.crawlDelaySeconds === 2);
  expect(asking).toHaveLength(1);
  expect(asking[0]?.robots).toBe("rules");
  expect(model.hosts.slice(10).filter((host) => host.crawlDelaySeconds === 2)).toEqual([]);
  expect(() => buildModel({ hosts: 10, pages: 200, ipGroups: [{ hosts: 3, crawlDelaySeconds: 0 }] })).toThrow(
    /crawlDelaySeconds/,
  );
});
