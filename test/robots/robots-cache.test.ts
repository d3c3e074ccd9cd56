import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { Fetcher, HostsFileResolver, NetPolicy } from "../../src/fetching/index.js";
import { RobotsCache, type RobotsCacheOptions, type RobotsSnapshot } from "../../src/robots/index.js";
import { type LoopbackServer, ManualClock, startServer } from "../fetching/loopback.js";

type Route = (req: IncomingMessage, res: ServerResponse) => void;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One loopback server answering for site.test and other.test; `routes` maps "host path" or "path". */
async function setup(routes: Record<string, Route | string>, options: Partial<RobotsCacheOptions> = {}) {
  const server: LoopbackServer = await startServer((req, res) => {
    const host = (req.headers.host ?? "").split(":")[0];
    const route = routes[`${host} ${req.url}`] ?? routes[req.url ?? ""];
    if (route === undefined) {
      res.writeHead(404).end();
    } else if (typeof route === "string") {
      res.writeHead(200, { "Content-Type": "text/plain" }).end(route);
    } else {
      route(req, res);
    }
  });
  cleanups.push(() => server.close());
  const fetcher = new Fetcher(
    {},
    {
      resolver: new HostsFileResolver("127.0.0.1 site.test other.test\n"),
      netPolicy: new NetPolicy({ allow: ["127.0.0.0/8"] }),
    },
  );
  cleanups.push(() => fetcher.close());
  const clock = new ManualClock();
  const cache = new RobotsCache({ userAgent: "ubicrawl", ...options }, { fetcher, clock });
  const origin = `http://site.test:${server.port}`;
  const robotsRequests = () => server.requests.filter((r) => r.url?.startsWith("/r")).length;
  return { server, cache, clock, origin, fetcher, robotsRequests };
}

const status =
  (code: number, body = ""): Route =>
  (_req, res) =>
    res.writeHead(code).end(body);

describe("RobotsCache: rules", () => {
  it("applies the longest matching rule, Allow winning ties, with wildcards and $", async () => {
    const { cache, origin } = await setup({
      "/robots.txt": [
        "User-agent: *",
        "Disallow: /private",
        "Allow: /private/public",
        "Disallow: /*.pdf$",
        "Disallow: /tie",
        "Allow: /tie",
      ].join("\n"),
    });
    const rules = await cache.get(origin);
    expect(rules.status).toBe("parsed");
    expect(rules.httpStatus).toBe(200);
    expect(rules.isAllowed(`${origin}/`)).toBe(true);
    expect(rules.isAllowed(`${origin}/private/x`)).toBe(false);
    expect(rules.isAllowed(`${origin}/private/public/y`)).toBe(true);
    expect(rules.isAllowed(`${origin}/doc.pdf`)).toBe(false);
    expect(rules.isAllowed(`${origin}/doc.pdf?page=2`)).toBe(true);
    expect(rules.isAllowed(`${origin}/tie`)).toBe(true);
    // Rules of one origin do not govern another.
    expect(rules.isAllowed("http://elsewhere.test/")).toBe(false);
  });

  it("uses the group of our product token over *, case-insensitively", async () => {
    const body = [
      "User-agent: *",
      "Disallow: /",
      "",
      "User-agent: UbiCrawl",
      "Disallow: /secret",
      "Crawl-delay: 2",
    ].join("\n");
    const { cache, origin, fetcher, clock } = await setup({ "/robots.txt": body });
    const ours = await cache.get(origin);
    expect(ours.isAllowed(`${origin}/page`)).toBe(true);
    expect(ours.isAllowed(`${origin}/secret/a`)).toBe(false);
    expect(ours.crawlDelayMs).toBe(2000);
    const other = await new RobotsCache({ userAgent: "otherbot" }, { fetcher, clock }).get(origin);
    expect(other.isAllowed(`${origin}/page`)).toBe(false);
    expect(other.crawlDelayMs).toBeUndefined();
  });

  it("clamps Crawl-delay into [minCrawlDelayMs, maxCrawlDelayMs]", async () => {
    const { cache, origin } = await setup(
      {
        "site.test /robots.txt": "User-agent: *\nCrawl-delay: 100\n",
        "other.test /robots.txt": "User-agent: *\nCrawl-delay: 0.1\n",
      },
      { minCrawlDelayMs: 500, maxCrawlDelayMs: 30_000 },
    );
    expect((await cache.get(origin)).crawlDelayMs).toBe(30_000);
    expect((await cache.get(origin.replace("site.test", "other.test"))).crawlDelayMs).toBe(500);
  });

  it("honours a long Crawl-delay by default (minutes, not the old 30 s clamp), up to a day", async () => {
    const { cache, origin } = await setup({
      "site.test /robots.txt": "User-agent: *\nCrawl-delay: 600\n",
      "other.test /robots.txt": "User-agent: *\nCrawl-delay: 9999999\n",
    });
    expect((await cache.get(origin)).crawlDelayMs).toBe(600_000);
    expect((await cache.get(origin.replace("site.test", "other.test"))).crawlDelayMs).toBe(86_400_000);
  });

  it("strips a BOM and ignores malformed lines", async () => {
    const { cache, origin } = await setup({
      "/robots.txt": "\uFEFFUser-agent: *\nthis line is garbage\n:::\nDisallow: /x\n",
    });
    const rules = await cache.get(origin);
    expect(rules.isAllowed(`${origin}/x`)).toBe(false);
    expect(rules.isAllowed(`${origin}/y`)).toBe(true);
  });

  it("ignores content beyond maxBytes", async () => {
    const head = "User-agent: *\nDisallow: /early\n";
    const padding = `# ${"x".repeat(2000)}\n`;
    const { cache, origin } = await setup(
      { "/robots.txt": `${head}${padding}Disallow: /late\n` },
      { maxBytes: 1000 },
    );
    const rules = await cache.get(origin);
    expect(rules.isAllowed(`${origin}/early`)).toBe(false);
    expect(rules.isAllowed(`${origin}/late`)).toBe(true);
    expect(rules.toJSON().text).toBe(head);
  });
});

describe("RobotsCache: RFC 9309 status handling", () => {
  it.each([404, 403, 401, 410])("treats %i as allow all", async (code) => {
    const { cache, origin } = await setup({ "/robots.txt": status(code) });
    const rules = await cache.get(origin);
    expect(rules.status).toBe("allow-all");
    expect(rules.isAllowed(`${origin}/anything`)).toBe(true);
  });

  it("treats 503 as disallow all, then fetches again at the retry time", async () => {
    let answer: Route = status(503);
    const { cache, origin, clock, server } = await setup(
      { "/robots.txt": (req, res) => answer(req, res) },
      { unavailableRetryMs: 60_000 },
    );
    const t0 = clock.now();
    const down = await cache.get(origin);
    expect(down.status).toBe("unavailable");
    expect(down.httpStatus).toBe(503);
    expect(down.isAllowed(`${origin}/`)).toBe(false);
    expect(down.retryAtMs).toBe(t0 + 60_000);
    expect(down.expiresAtMs).toBe(t0 + 60_000);

    answer = (_req, res) => res.end("User-agent: *\nDisallow: /no\n");
    clock.advance(59_999);
    expect(await cache.get(origin)).toBe(down);
    expect(server.requests.length).toBe(1);
    clock.advance(1);
    const up = await cache.get(origin);
    expect(server.requests.length).toBe(2);
    expect(up.status).toBe("parsed");
    expect(up.isAllowed(`${origin}/yes`)).toBe(true);
    expect(up.isAllowed(`${origin}/no`)).toBe(false);
  });

  it("treats network and DNS failures as unavailable with their code", async () => {
    const { cache, server } = await setup({});
    const dns = await cache.get("http://unknown.test");
    expect(dns.status).toBe("unavailable");
    expect(dns.error).toBe(ErrorCode.DnsNotFound);
    const port = server.port;
    await server.close();
    const refused = await cache.get(`http://127.0.0.1:${port}`);
    expect(refused.status).toBe("unavailable");
    expect(refused.error).toBe(ErrorCode.ConnectFailed);
  });

  it("follows up to 5 redirects, across hosts, resolving relative Locations", async () => {
    const redirect =
      (location: string): Route =>
      (_req, res) =>
        res.writeHead(301, { Location: location }).end();
    const { cache, origin, server } = await setup({
      "site.test /robots.txt": redirect("/r1"),
      "site.test /r1": redirect("r2"),
      // Absolute, to the other host on this server's port.
      "site.test /r2": (req, res) => redirect(`http://other.test:${req.socket.localPort}/r3`)(req, res),
      "other.test /r3": redirect("/r4"),
      "other.test /r4": redirect("/r5"),
      "other.test /r5": "User-agent: *\nDisallow: /moved\n",
    });
    const rules = await cache.get(origin);
    expect(rules.status).toBe("parsed");
    expect(rules.isAllowed(`${origin}/moved/x`)).toBe(false);
    expect(rules.isAllowed(`${origin}/kept`)).toBe(true);
    expect(server.requests.map((r) => `${r.headers.host?.split(":")[0]} ${r.url}`)).toEqual([
      "site.test /robots.txt",
      "site.test /r1",
      "site.test /r2",
      "other.test /r3",
      "other.test /r4",
      "other.test /r5",
    ]);
  });

  it("makes robots.txt unavailable after a sixth redirect", async () => {
    const hop =
      (n: number): Route =>
      (_req, res) =>
        res.writeHead(302, { Location: `/r${n}` }).end();
    const { cache, origin, robotsRequests } = await setup({
      "/robots.txt": hop(1),
      "/r1": hop(2),
      "/r2": hop(3),
      "/r3": hop(4),
      "/r4": hop(5),
      "/r5": hop(6),
      "/r6": "User-agent: *\nDisallow:\n",
    });
    const rules = await cache.get(origin);
    expect(rules.status).toBe("unavailable");
    expect(rules.error).toBe(ErrorCode.TooManyRedirects);
    expect(rules.isAllowed(`${origin}/`)).toBe(false);
    expect(robotsRequests()).toBe(6); // robots.txt + r1..r5; r6 is never asked
  });
});

describe("RobotsCache: caching", () => {
  it("fetches once per origin for concurrent callers", async () => {
    const { cache, origin, server } = await setup({
      "/robots.txt": (_req, res) => setTimeout(() => res.end("User-agent: *\nDisallow: /a\n"), 30),
    });
    const all = await Promise.all([
      cache.get(origin),
      cache.get(origin),
      cache.get(`${origin}/some/page?x=1`),
      cache.get(origin.toUpperCase().replace("HTTP", "http")),
    ]);
    expect(server.requests.length).toBe(1);
    for (const rules of all) expect(rules).toBe(all[0]);
    expect(cache.size).toBe(1);
  });

  it("expires rules after ttlMs on the injected clock", async () => {
    const { cache, origin, clock, server } = await setup(
      { "/robots.txt": "User-agent: *\nDisallow: /a\n" },
      { ttlMs: 1000 },
    );
    const first = await cache.get(origin);
    expect(first.expiresAtMs).toBe(first.fetchedAtMs + 1000);
    clock.advance(999);
    expect(await cache.get(origin)).toBe(first);
    expect(server.requests.length).toBe(1);
    clock.advance(1);
    const second = await cache.get(origin);
    expect(second).not.toBe(first);
    expect(server.requests.length).toBe(2);
  });

  it("answers at once with rules cached and fresh, with a promise of the fetch otherwise", async () => {
    const { cache, origin, clock, server } = await setup(
      { "/robots.txt": "User-agent: *\nDisallow: /a\n" },
      { ttlMs: 1000 },
    );
    const asked = cache.answer(origin);
    expect(asked).toBeInstanceOf(Promise);
    const first = await asked;
    expect(cache.answer(origin)).toBe(first);
    expect(cache.answer(`${origin}/some/page`)).toBe(first);
    clock.advance(1000);
    const again = cache.answer(origin);
    expect(again).toBeInstanceOf(Promise);
    expect(await again).not.toBe(first);
    expect(server.requests.length).toBe(2);
    await expect(cache.answer("ftp://site.test/")).rejects.toThrow();
  });

  it("round-trips through JSON and restores without refetching while unexpired", async () => {
    const { cache, origin, clock, fetcher, server } = await setup({
      "/robots.txt": "User-agent: ubicrawl\nDisallow: /private\nCrawl-delay: 3\n",
    });
    const rules = await cache.get(origin);
    const snapshot = JSON.parse(JSON.stringify(rules)) as RobotsSnapshot;
    expect(snapshot).toMatchObject({ v: 1, origin, status: "parsed", httpStatus: 200 });

    const restarted = new RobotsCache({ userAgent: "ubicrawl" }, { fetcher, clock });
    const restored = restarted.restore(snapshot);
    expect(restored?.isAllowed(`${origin}/private/x`)).toBe(false);
    expect(restored?.isAllowed(`${origin}/public`)).toBe(true);
    expect(restored?.crawlDelayMs).toBe(3000);
    expect(restored?.expiresAtMs).toBe(rules.expiresAtMs);
    expect(await restarted.get(origin)).toBe(restored);
    expect(server.requests.length).toBe(1);

    const retryAtMs = clock.now() + 5;
    const unavailable = {
      ...snapshot,
      status: "unavailable",
      text: undefined,
      retryAtMs,
      expiresAtMs: retryAtMs,
    } as const;
    expect(restarted.restore(unavailable)?.isAllowed(`${origin}/public`)).toBe(false);
    clock.advance(10);
    expect(restarted.restore(unavailable)).toBeUndefined();
    expect(() => restarted.restore({ v: 2 } as unknown as RobotsSnapshot)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidArgument }),
    );
  });

  it("rejects bad origins and bad options", async () => {
    const { cache, fetcher } = await setup({});
    await expect(cache.get("ftp://site.test")).rejects.toMatchObject({ code: ErrorCode.InvalidUrl });
    await expect(cache.get("nonsense")).rejects.toMatchObject({ code: ErrorCode.InvalidUrl });
    for (const bad of [
      { userAgent: "ubicrawl/0.1" },
      { userAgent: "ubicrawl", ttlMs: -1 },
      { userAgent: "ubicrawl", maxBytes: 0 },
      { userAgent: "ubicrawl", maxRedirects: 1.5 },
      { userAgent: "ubicrawl", minCrawlDelayMs: 10, maxCrawlDelayMs: 5 },
    ]) {
      expect(() => new RobotsCache(bad, { fetcher }), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: ErrorCode.InvalidArgument }),
      );
    }
  });
});
