import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  buildModel,
  computeTruth,
  type HostInfo,
  type RunningTestWeb,
  startTestWeb,
  type TruthLimits,
} from "../../src/testweb/index.js";
import { canonical, extractLinks, fetchVia, parseHostsFile, parseRobots } from "./helpers.js";

const LIMITS: TruthLimits = { maxDepth: 8, maxPagesPerHost: 10_000, userAgent: "ubicrawl/0.1 (+test)" };

interface CrawlResult {
  fetched: string[];
  inLinks: Map<string, number>;
  /** Each fetched URL's distinct links a crawler routes (same-host ones past the depth limit left out). */
  links: Map<string, Set<string>>;
  robotsDisallowed: number;
  unresolvable: string[];
}

/** The `<loc>` URLs of a sitemap that are on `host` (a minimal reader: the test web writes one per line). */
function sitemapLocs(xml: string, host: string): string[] {
  return [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)]
    .map((match) => match[1] as string)
    .filter((loc) => new URL(loc).hostname === host);
}

/**
 * An independent reference crawler over real HTTP: breadth-first, the crawler's rules from the spec,
 * a regex link extractor, robots-parser, names resolved only through the hosts file.
 */
async function referenceCrawl(web: RunningTestWeb, limits: TruthLimits): Promise<CrawlResult> {
  const addresses = parseHostsFile(web.hostsFileText());
  const robots = new Map<string, (url: string) => boolean>();
  const seen = new Set<string>();
  const unresolvable = new Set<string>();
  const queue: Array<{ url: string; depth: number }> = [];
  const fetched: string[] = [];
  /** Links (and redirects) to each URL on the pages fetched. */
  const inLinks = new Map<string, number>();
  const links = new Map<string, Set<string>>();
  let robotsDisallowed = 0;
  /** Pages listed by sitemaps read meanwhile, queued after the URL whose discovery read them. */
  const sitemapPages: string[] = [];

  const robotsFor = async (host: string, ip: string) => {
    let check = robots.get(host);
    if (check === undefined) {
      const answer = await fetchVia(ip, web.port, host, "/robots.txt");
      let sitemaps: string[] = [];
      if (answer.status >= 500) check = () => false;
      else if (answer.status >= 400) check = () => true;
      else {
        const parsed = parseRobots(`http://${host}:${web.port}/robots.txt`, answer.body.toString());
        check = (url) => parsed.isAllowed(url, limits.userAgent) !== false;
        sitemaps = parsed.getSitemaps();
      }
      robots.set(host, check);
      // A robots.txt that names no sitemap leaves /sitemap.xml to try: fetched, read as a sitemap.
      const sitemap = `http://${host}:${web.port}/sitemap.xml`;
      if (answer.status < 500 && sitemaps.length === 0 && !seen.has(sitemap)) {
        seen.add(sitemap);
        if (check(sitemap)) {
          const response = await fetchVia(ip, web.port, host, "/sitemap.xml");
          fetched.push(sitemap);
          // Its pages, at depth 1; those of another host (a mirror serves its host's sitemap) dropped.
          links.set(sitemap, new Set());
          if (response.status === 200) {
            sitemapPages.push(...sitemapLocs(response.body.toString(), host));
            links.set(sitemap, new Set(sitemapPages));
          } else expect(response.status).toBe(404);
        } else robotsDisallowed++;
      }
    }
    return check;
  };

  const discover = async (url: string, depth: number) => {
    const host = new URL(url).hostname;
    const ip = addresses.get(host);
    if (ip === undefined) {
      unresolvable.add(host);
      return;
    }
    if (depth > limits.maxDepth || seen.has(url)) return;
    seen.add(url);
    if (!(await robotsFor(host, ip))(url)) {
      robotsDisallowed++;
      return;
    }
    queue.push({ url, depth });
    for (const page of sitemapPages.splice(0)) await discover(page, 1);
  };

  for (const seed of web.seeds) await discover(seed, 0);
  for (let head = 0; head < queue.length; head++) {
    const { url, depth } = queue[head] as { url: string; depth: number };
    const parsed = new URL(url);
    const response = await fetchVia(
      addresses.get(parsed.hostname) as string,
      web.port,
      parsed.hostname,
      parsed.pathname + parsed.search,
    );
    fetched.push(url);
    const routed = new Set<string>();
    links.set(url, routed);
    const follow = (target: string) => {
      inLinks.set(target, (inLinks.get(target) ?? 0) + 1);
      const targetDepth = new URL(target).hostname === parsed.hostname ? depth + 1 : 0;
      if (targetDepth <= limits.maxDepth) routed.add(target);
      return discover(target, targetDepth);
    };
    if (response.status >= 300 && response.status < 400 && response.location !== undefined) {
      const target = canonical(response.location, url);
      if (target !== undefined) await follow(target);
    } else if (
      response.status >= 200 &&
      response.status < 300 &&
      response.contentType.startsWith("text/html")
    ) {
      const { links, metaNofollow } = extractLinks(response.body.toString(), url);
      if (metaNofollow) continue;
      for (const link of links) if (!link.nofollow) await follow(link.url);
    }
  }
  return { fetched, inLinks, links, robotsDisallowed, unresolvable: [...unresolvable].sort() };
}

describe("computeTruth against a real crawl", () => {
  let web: RunningTestWeb;
  beforeAll(async () => {
    web = await startTestWeb({ seed: 12, hosts: 12, pages: 900 });
  });
  afterAll(async () => {
    await web?.stop();
  });

  it("equals what a reference crawler over HTTP fetches, URL for URL", async () => {
    const truth = computeTruth(web.model, web.port, LIMITS, undefined, { inDegree: true, linkGraph: true });
    web.recorder.reset();
    const crawl = await referenceCrawl(web, LIMITS);
    expect(truth.depthExact).toBe(true);
    expect(truth.cappedHosts).toEqual([]);
    expect([...crawl.fetched].sort()).toEqual([...truth.urls].sort());
    expect(new Set(truth.urls).size).toBe(truth.urls.length);
    expect(crawl.robotsDisallowed).toBe(truth.robotsDisallowed);
    expect(crawl.unresolvable).toEqual(truth.unresolvableHosts);
    // In-degree (the quality metric's importance): links to each URL on the pages fetched.
    expect(truth.inDegree?.size).toBe(truth.urls.length);
    for (const url of truth.urls)
      expect([url, truth.inDegree?.get(url)]).toEqual([url, crawl.inLinks.get(url) ?? 0]);
    expect(Math.max(...(truth.inDegree?.values() ?? []))).toBeGreaterThan(20);
    // The link graph (for a simulated crawl): the fetched URLs first, and each one's routed links.
    const graph = truth.linkGraph;
    if (graph === undefined) throw new Error("no link graph");
    expect(graph.fetchedCount).toBe(truth.urls.length);
    expect(graph.urls.slice(0, graph.fetchedCount)).toEqual(truth.urls);
    const linksOf = (i: number) =>
      [...graph.linkTargets.subarray(graph.linkStart[i], graph.linkStart[i + 1])].map((t) => graph.urls[t]);
    truth.urls.forEach((url, i) => {
      expect([url, linksOf(i).sort()]).toEqual([url, [...(crawl.links.get(url) ?? [])].sort()]);
    });
    const routedNotFetched = new Set([...crawl.links.values()].flatMap((set) => [...set]));
    for (const url of truth.urls) routedNotFetched.delete(url);
    expect(graph.urls.slice(graph.fetchedCount).sort()).toEqual([...routedNotFetched].sort());
    // Each node on its URL's host; each host's sitemap, where one was fetched, is its node.
    expect(graph.urls.map((_, i) => graph.hosts[graph.hostOf[i] as number])).toEqual(
      graph.urls.map((url) => new URL(url).host),
    );
    const sitemaps = truth.urls.filter((url) => url.endsWith("/sitemap.xml"));
    expect(
      sitemaps.map(
        (url) => graph.urls[graph.sitemapOf[graph.hostOf[truth.urls.indexOf(url)] as number] as number],
      ),
    ).toEqual(sitemaps);
    expect([...graph.sitemapOf].filter((node) => node >= 0).length).toBe(sitemaps.length);

    // The web is dirty enough for the comparison to mean something.
    expect(truth.urls.length).toBeGreaterThan(700);
    expect(truth.robotsDisallowed).toBeGreaterThan(0);
    expect(truth.unresolvableHosts.length).toBeGreaterThan(0);
    expect(truth.urls.some((u) => u.includes("/go/"))).toBe(true);
    expect(truth.urls.some((u) => u.endsWith(".pdf") || u.endsWith(".png"))).toBe(true);
    // Pages only a sitemap lists, mirrors, and URL aliases are in it too.
    expect(truth.urls.filter((u) => u.includes("/archive/a")).length).toBeGreaterThan(3);
    expect(truth.urls.filter((u) => new URL(u).hostname.startsWith("mirror")).length).toBeGreaterThan(10);
    expect(truth.urls.some((u) => u.includes("?sessionid="))).toBe(true);
    expect(truth.urls.some((u) => u.includes("/gone"))).toBe(true);
    expect(truth.urls.some((u) => u.includes("/list?page="))).toBe(true);
    expect(truth.urls.some((u) => u.includes("/~a"))).toBe(true);
    expect(truth.urls.some((u) => u.includes("/nf/"))).toBe(false);
    for (const family of ["i", "m", "f"])
      expect(truth.urls.some((u) => u.includes(`/embed/${family}`))).toBe(true);
    // Trap: the root plus months -7..+7 around January 2026 (depth 1 + |k| <= 8), and /sitemap.xml.
    expect(truth.urls.filter((u) => u.includes("calendar.ubi.test")).length).toBe(17);
    // /sitemap.xml is tried on the hosts reached whose robots.txt answers (none names a sitemap).
    expect(truth.urls.filter((u) => u.endsWith("/sitemap.xml")).length).toBeGreaterThan(5);

    // The recorder saw exactly that crawl: every page once, robots.txt once per host.
    const counts = web.recorder.servedCounts();
    const pages = [...counts.keys()].filter((u) => !u.endsWith("/robots.txt"));
    expect(pages.sort()).toEqual([...truth.urls].sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(web.recorder.maxConcurrencyPerHost()).toBe(1);
  });
});

describe("computeTruth", () => {
  const model = buildModel({ seed: 2, hosts: 120, pages: 9000 });
  const port = 8080;

  it("bounds the calendar trap by depth: month k has depth 1 + |k|", () => {
    const root = `http://calendar.ubi.test:${port}/`;
    const truth = computeTruth(model, port, { ...LIMITS, maxDepth: 3 }, [root]);
    expect([...truth.urls].sort()).toEqual(
      [
        root,
        `${root}sitemap.xml`,
        `${root}calendar/2025/11`,
        `${root}calendar/2025/12`,
        `${root}calendar/2026/01`,
        `${root}calendar/2026/02`,
        `${root}calendar/2026/03`,
      ].sort(),
    );
    expect(truth.depthExact).toBe(false);
  });

  it("evaluates robots.txt for the given user agent and honours 403 and 503", () => {
    const ours = computeTruth(model, port, LIMITS);
    const other = computeTruth(model, port, { ...LIMITS, userAgent: "otherbot/2.0" });
    const hostOf = (url: string) =>
      model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1] as HostInfo;
    const drafts = (urls: string[]) =>
      urls.filter((u) => u.includes("/drafts/") && hostOf(u).robots === "rules-ubicrawl").length;
    expect(drafts(ours.urls)).toBe(0);
    expect(drafts(other.urls)).toBeGreaterThan(0);
    expect(ours.robotsDisallowed).toBeGreaterThan(other.robotsDisallowed);
    const ruled = (u: string) => hostOf(u).robots.startsWith("rules");
    expect(ours.urls.some((u) => /\/private\/p\d/.test(u) && ruled(u))).toBe(false);
    expect(ours.urls.some((u) => /\/private\/p\d/.test(u) && !ruled(u))).toBe(true);
    expect(ours.urls.some((u) => u.includes("/private/open"))).toBe(true);

    const unavailable = model.hosts[model.unavailableRobotsHost] as HostInfo;
    const forbidden = model.hosts[model.forbiddenRobotsHost] as HostInfo;
    expect(ours.urls.some((u) => hostOf(u) === unavailable)).toBe(false);
    expect(ours.urls.filter((u) => hostOf(u) === forbidden).length).toBeGreaterThan(forbidden.articles);
    const only503 = computeTruth(model, port, LIMITS, [`http://${unavailable.name}:${port}/`]);
    expect(only503.urls).toEqual([]);
    expect(only503.robotsDisallowed).toBe(1);
  });

  it("reaches every normal host from the default seeds and lists capped hosts", () => {
    const truth = computeTruth(model, port, LIMITS);
    const hosts = new Set(truth.urls.map((u) => new URL(u).hostname));
    expect(hosts.size).toBe(model.hosts.length - 1); // all but the robots-503 host
    const biggest = model.hosts.reduce((x, y) => (y.articles > x.articles ? y : x));
    const capped = computeTruth(model, port, { ...LIMITS, maxPagesPerHost: 50 });
    expect(capped.cappedHosts).toContain(biggest.name);
    expect(capped.cappedHosts).not.toContain(model.hosts[model.unavailableRobotsHost]?.name);
  });

  it("reports seeds on unknown hosts as unresolvable and rejects bad limits", () => {
    const truth = computeTruth(model, port, LIMITS, [`http://nowhere.ubi.test:${port}/`]);
    expect(truth.urls).toEqual([]);
    expect(truth.unresolvableHosts).toEqual(["nowhere.ubi.test"]);
    for (const limits of [
      { ...LIMITS, maxDepth: -1 },
      { ...LIMITS, maxPagesPerHost: 0 },
    ]) {
      let caught: unknown;
      try {
        computeTruth(model, port, limits);
      } catch (error) {
        caught = error;
      }
      expect(isUbiError(caught, ErrorCode.InvalidArgument)).toBe(true);
    }
  });
});
