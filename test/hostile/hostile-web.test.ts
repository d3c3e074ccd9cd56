import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { Fetcher, HostsFileResolver, NetPolicy } from "../../src/fetching/index.js";
import { extractLinks } from "../../src/parsing/index.js";
import { CONTROL_LABEL, HOSTILE_DOMAIN, resolveHostileWebOptions } from "../../src/testweb/hostile/index.js";
import { controlPaths, startHostileWeb } from "../../src/testweb/index.js";
import { rejectionOf, TEST_DRIP_MS, TEST_TIMEOUTS, until, useHostileWeb } from "./helpers.js";

/** The hostile web itself: its addresses, hosts file, seeds, control host, traffic record and stop. */

const fixture = useHostileWeb();

describe("startHostileWeb", () => {
  it("puts every host on its own 127.2.0.x address, in the hosts file, and reachable from the seeds", () => {
    const { web } = fixture;
    const ips = web.hosts.map((host) => host.ip);
    expect(new Set(ips).size).toBe(web.hosts.length);
    for (const host of web.hosts) {
      expect(host.ip).toMatch(/^127\.2\.0\.\d{1,3}$/);
      expect(host.name).toBe(`${host.label}.${HOSTILE_DOMAIN}`);
      expect(web.hostsFileText()).toContain(`${host.ip} ${host.name}\n`);
      expect(host.entryUrls.length).toBeGreaterThan(0);
      for (const url of host.entryUrls) expect(web.seeds).toContain(url);
    }
    expect(web.hosts[0]?.label).toBe(CONTROL_LABEL);
    expect(web.seeds[0]).toBe(web.url(CONTROL_LABEL, "/"));
    expect(web.hosts.length).toBeGreaterThanOrEqual(20);
  });

  it("serves the control home linking to its own pages and to every hostile entry URL", async () => {
    const { web } = fixture;
    const home = await fixture.fetcher().fetch(web.url(CONTROL_LABEL, "/"));
    expect(home.status).toBe(200);
    expect(home.ip).toBe(web.host(CONTROL_LABEL).ip);
    const links = extractLinks(home.body, home.url).links.map((link) => link.url);
    const own = controlPaths(web.options.controlPages)
      .slice(1)
      .map((path) => web.url(CONTROL_LABEL, path));
    expect(links.sort()).toEqual([...own, ...web.seeds.slice(1)].sort());
  });

  it("serves by address: a name resolved to another host's address reaches that host", async () => {
    const { web } = fixture;
    // Resolving the control name to the charsets host's address reaches the charsets host instead.
    const wrong = new HostsFileResolver(`${web.host("charsets").ip} ${web.host(CONTROL_LABEL).name}\n`);
    const fetcher = new Fetcher(TEST_TIMEOUTS, {
      resolver: wrong,
      netPolicy: new NetPolicy({ allow: ["127.0.0.0/8"] }),
    });
    try {
      const result = await fetcher.fetch(web.url(CONTROL_LABEL, "/page/1"));
      expect(result.status).toBe(404);
    } finally {
      await fetcher.close();
    }
  });

  it("rejects invalid options and unknown hosts with InvalidArgument", async () => {
    expect(() => resolveHostileWebOptions({ dripIntervalMs: 0 })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(() => resolveHostileWebOptions({ hugeBodyBytes: 1.5 })).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    await expect(startHostileWeb({ port: 70_000 })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
    expect(() => fixture.web.host("no-such-host")).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
    expect(resolveHostileWebOptions()).toMatchObject({ hugeBodyBytes: 2 ** 30, manyLinks: 100_000 });
  });
});

describe("traffic record", () => {
  it("counts requests per URL and records two requests in flight to one host as an overlap", async () => {
    const { web } = fixture;
    const url = web.url("drip-body", "/");
    const before = web.traffic.servedCounts().get(url) ?? 0;
    // Two fetchers: two connections, so two requests to one host at once, as an impolite crawler would.
    const a = fixture.fetcher().fetch(url);
    const b = fixture.fetcher().fetch(url);
    await Promise.allSettled([a, b]);
    expect(web.traffic.servedCounts().get(url)).toBe(before + 2);
    await until(() => web.traffic.overlaps.length > 0, "the overlap to be recorded");
    expect(web.traffic.overlaps[0]).toMatchObject({
      host: web.host("drip-body").name,
      first: url,
      second: url,
    });
  });

  it("records no overlap for requests one after the other", async () => {
    const { web } = fixture;
    const seen = web.traffic.overlaps.length;
    const fetcher = fixture.fetcher();
    for (const path of ["/page/1", "/page/2", "/page/3"]) await fetcher.fetch(web.url(CONTROL_LABEL, path));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(web.traffic.overlaps.length).toBe(seen);
    expect(web.traffic.urlsOf(web.host(CONTROL_LABEL).name)).toEqual(
      expect.arrayContaining([web.url(CONTROL_LABEL, "/page/3")]),
    );
  });
});

describe("stop", () => {
  it("ends dripping connections, refuses new ones, and is idempotent", async () => {
    const web = await startHostileWeb({ dripIntervalMs: TEST_DRIP_MS });
    const fetcher = new Fetcher(
      { ...TEST_TIMEOUTS, totalTimeoutMs: 30_000, bodyIdleTimeoutMs: 30_000, headersTimeoutMs: 30_000 },
      {
        resolver: new HostsFileResolver(web.hostsFileText()),
        netPolicy: new NetPolicy({ allow: ["127.0.0.0/8"] }),
      },
    );
    try {
      const dripping = rejectionOf(fetcher.fetch(web.url("drip-body", "/")));
      await until(
        () => web.traffic.requests.some((r) => r.url === web.url("drip-body", "/")),
        "the drip to start",
      );
      await Promise.all([web.stop(), web.stop()]);
      const error = await dripping;
      expect(isUbiError(error, ErrorCode.ProtocolError), String(error)).toBe(true);
      expect(web.traffic.requests.every((r) => r.endedAtMs !== undefined)).toBe(true);
      const refused = await rejectionOf(fetcher.fetch(web.url(CONTROL_LABEL, "/")));
      expect(isUbiError(refused, ErrorCode.ConnectFailed), String(refused)).toBe(true);
    } finally {
      await fetcher.close();
      await web.stop();
    }
  });
});
