import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import {
  buildModel,
  computeTruth,
  type HostInfo,
  hostsFileText,
  respond,
  type WebModel,
} from "../../src/testweb/index.js";
import { forEachLink } from "../../src/testweb/links.js";
import { extractLinks, parseHostsFile, parseRobots } from "./helpers.js";

const PORT = 8123;

function articlePath(model: WebModel, host: number, i: number): string {
  const info = model.hosts[host];
  if (info === undefined) throw new Error("no host");
  return `/s${Math.floor(i / info.sectionSize)}/p${i}.html`;
}

function body(model: WebModel, host: number, path: string): string {
  return String(respond(model, PORT, host, path).body);
}

/** Up to `perHost` articles from each of the first `hosts` normal hosts. */
function sampleArticles(model: WebModel, hosts: number, perHost: number): Array<[number, string]> {
  const sample: Array<[number, string]> = [];
  for (let h = 0; h < hosts; h++) {
    const info = model.hosts[h];
    if (info === undefined) break;
    for (let t = 0; t < Math.min(perHost, info.articles); t++) {
      const i = Math.floor((t * info.articles) / perHost);
      sample.push([h, articlePath(model, h, i)]);
    }
  }
  return sample;
}

describe("buildModel", () => {
  it("sends about crossLinkPercent% of an article's links to other hosts, read from the rendered pages", () => {
    const shares = [0, 5, 20, 40].map((percent) => {
      const model = buildModel({ seed: 3, hosts: 30, pages: 3000, crossLinkPercent: percent });
      let all = 0;
      let leaving = 0;
      for (const [h, path] of sampleArticles(model, model.normalHosts, 20)) {
        const host = model.hosts[h] as HostInfo;
        const page = respond(model, 80, h, path);
        if (page.status !== 200) continue;
        for (const { url } of extractLinks(String(page.body), `http://${host.name}${path}`).links) {
          all++;
          if (new URL(url).hostname !== host.name) leaving++;
        }
      }
      return leaving / all;
    });
    expect(shares[0]).toBe(0);
    for (const [i, percent] of [5, 20, 40].entries()) {
      expect(Math.abs((shares[i + 1] as number) - percent / 100)).toBeLessThan(0.04);
    }
    expect(() => buildModel({ hosts: 10, pages: 200, crossLinkPercent: 51 })).toThrow(/crossLinkPercent/);
  });

  it("is deterministic: the same seed gives the same hosts and pages, another seed a different web", () => {
    const a = buildModel({ seed: 7, hosts: 50, pages: 3000 });
    const b = buildModel({ seed: 7, hosts: 50, pages: 3000 });
    const c = buildModel({ seed: 8, hosts: 50, pages: 3000 });
    expect(b.hosts).toEqual(a.hosts);
    expect(hostsFileText(b)).toBe(hostsFileText(a));
    expect(b.seedHosts).toEqual(a.seedHosts);
    expect(a.hosts.map((h) => h.articles)).not.toEqual(c.hosts.map((h) => h.articles));
    for (const [host, path] of sampleArticles(a, 5, 3)) {
      expect(body(b, host, path)).toBe(body(a, host, path));
    }
    expect(body(c, 0, "/s0/p0.html")).not.toBe(body(a, 0, "/s0/p0.html"));
  });

  it("makes heavy-tailed host sizes summing to about the page target", () => {
    const model = buildModel({ hosts: 200, pages: 20_000 });
    const sizes = model.hosts.filter((h) => h.kind === "normal").map((h) => h.articles);
    sizes.sort((x, y) => y - x);
    const total = sizes.reduce((x, y) => x + y, 0);
    const median = sizes[sizes.length >> 1] as number;
    expect(sizes[0]).toBeGreaterThan(10 * median);
    expect(sizes.slice(0, 20).reduce((x, y) => x + y, 0)).toBeGreaterThan(0.35 * total);
    expect(model.totalUrls).toBeGreaterThan(18_000);
    expect(model.totalUrls).toBeLessThan(24_000);
  });

  it("gives the biggest host biggestHostPercent of the articles, past the cap, the others the rest under it", () => {
    const plain = buildModel({ seed: 3, hosts: 60, pages: 6000, maxArticlesPerHost: 300 });
    const model = buildModel({
      seed: 3,
      hosts: 60,
      pages: 6000,
      maxArticlesPerHost: 300,
      biggestHostPercent: 30,
    });
    const articles = (m: WebModel) => m.hosts.filter((h) => h.kind === "normal").map((h) => h.articles);
    const sizes = articles(model);
    const total = Math.round(6000 / 1.2);
    const biggest = Math.round(total * 0.3);
    // The host of the largest draw, the biggest of the plain web too, gets the share exactly.
    const top = articles(plain).indexOf(Math.max(...articles(plain)));
    expect(sizes[top]).toBe(biggest);
    expect(Math.max(...sizes.filter((_, i) => i !== top))).toBeLessThanOrEqual(300);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(5);
    expect(Math.abs(sizes.reduce((x, y) => x + y, 0) - total)).toBeLessThan(total * 0.01);
    // Without the option the web is the one it always was.
    expect(buildModel({ seed: 3, hosts: 60, pages: 6000, maxArticlesPerHost: 300 }).hosts).toEqual(
      plain.hosts,
    );
    // A small share still leaves it the biggest: the others are capped at its size.
    const small = articles(buildModel({ seed: 3, hosts: 60, pages: 6000, biggestHostPercent: 2 }));
    expect(small[top]).toBe(Math.round(total * 0.02));
    expect(Math.max(...small)).toBe(small[top]);
    for (const biggestHostPercent of [0, 91, 2.5]) {
      expect(() => buildModel({ hosts: 60, pages: 6000, biggestHostPercent })).toThrow(/biggestHostPercent/);
    }
    // 90% of 833 articles leaves 83 for 59 hosts of at least 5.
    expect(() => buildModel({ hosts: 60, pages: 1200, biggestHostPercent: 90 })).toThrow(
      /biggestHostPercent 90/,
    );
  });

  it("links goneHosts dead hosts (2% of the hosts by default), none of them in the hosts file", () => {
    expect(buildModel({ hosts: 800, pages: 41_000 }).goneHosts).toHaveLength(16);
    expect(buildModel({ hosts: 30, pages: 3000 }).goneHosts).toHaveLength(1);
    const model = buildModel({ seed: 2, hosts: 30, pages: 3000, goneHosts: 7 });
    expect(model.goneHosts).toHaveLength(7);
    expect(new Set(model.goneHosts).size).toBe(7);
    const names = new Set(parseHostsFile(hostsFileText(model)).keys());
    for (const name of model.goneHosts) expect(names.has(name)).toBe(false);
    // Pages link every one of them: a crawl meets all 7 dead hosts.
    const truth = computeTruth(model, PORT, { maxDepth: 20, maxPagesPerHost: 50_000, userAgent: "ubicrawl" });
    expect(truth.unresolvableHosts).toEqual([...model.goneHosts].sort());
    for (const goneHosts of [0, 10_001, 1.5]) {
      expect(() => buildModel({ hosts: 30, pages: 3000, goneHosts })).toThrow(/goneHosts/);
    }
  });

  it("adds mirrors of small ordinary hosts, each on its own address and linked from its host's home page", () => {
    const model = buildModel({ seed: 3, hosts: 60, pages: 3000, mirrors: 3 });
    expect(model.mirrorHosts).toHaveLength(3);
    const special = new Set([...model.seedHosts, model.forbiddenRobotsHost, model.unavailableRobotsHost]);
    const smallest = Math.min(...model.hosts.filter((h) => h.kind === "normal").map((h) => h.urlCount));
    for (const [k, index] of model.mirrorHosts.entries()) {
      const mirror = model.hosts[index] as HostInfo;
      const original = model.hosts[mirror.mirrorOf as number] as HostInfo;
      expect(mirror).toMatchObject({
        kind: "mirror",
        name: `mirror${k}.ubi.test`,
        urlCount: original.urlCount,
      });
      expect(original).toMatchObject({ kind: "normal", mirroredBy: index });
      expect(special.has(original.index)).toBe(false);
      expect(original.urlCount).toBeLessThan(smallest * 3);
      expect(model.hosts.filter((h) => h.ip === mirror.ip)).toEqual([mirror]);
      // Every response of the mirror is its host's, byte for byte.
      for (const path of ["/", "/robots.txt", "/s0/", "/nope.html", "/static/site.css"]) {
        expect(respond(model, 80, index, path)).toEqual(respond(model, 80, original.index, path));
      }
      const links: number[] = [];
      forEachLink(model, original.index, 0, (host) => links.push(host));
      expect(links).toContain(index);
    }
    expect(() => buildModel({ hosts: 10, pages: 200, seedCount: 3, mirrors: 6 })).toThrow(/mirrors/);
    expect(buildModel({ hosts: 5, pages: 200 }).mirrorHosts).toEqual([]);
  });

  it("serves each host's URL aliases with the bytes of the page they alias, and links them from the home page", () => {
    const model = buildModel({ seed: 4, hosts: 20, pages: 1000 });
    for (const host of model.hosts.filter((h) => h.kind === "normal")) {
      const home = respond(model, 80, host.index, "/");
      const article = respond(model, 80, host.index, `/s0/p0.html`);
      const section = respond(model, 80, host.index, "/s0/");
      expect(respond(model, 80, host.index, "/index.html")).toEqual(home);
      const linked = extractLinks(String(home.body), `http://${host.name}/`).links.map(({ url }) => url);
      const session = linked.find((url) => url.includes("sessionid="));
      const tracking = linked.find((url) => url.includes("utm_source="));
      expect(linked).toContain(`http://${host.name}/index.html`);
      expect(
        respond(
          model,
          80,
          host.index,
          new URL(session as string).pathname + new URL(session as string).search,
        ),
      ).toEqual(article);
      expect(
        respond(
          model,
          80,
          host.index,
          new URL(tracking as string).pathname + new URL(tracking as string).search,
        ),
      ).toEqual(section);
      expect(respond(model, 80, host.index, "/s0/p0.html?sessionid=other").status).toBe(404);
    }
  });

  it("stays cheap for 5,000 hosts and a million pages", () => {
    const started = performance.now();
    const model = buildModel({ hosts: 5000, pages: 1_000_000 });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(model.hosts).toHaveLength(5003); // with the trap host and two mirrors
    expect(model.totalUrls).toBeGreaterThan(900_000);
    expect(model.totalUrls).toBeLessThan(1_150_000);
  });

  it("gives every host its own 127.1.x.y address except about 5% virtual hosts", () => {
    const model = buildModel({ hosts: 400, pages: 20_000 });
    const hosts = parseHostsFile(hostsFileText(model));
    expect(hosts.size).toBe(403); // with the trap host and two mirrors
    for (const [name, ip] of hosts) {
      expect(name).toMatch(/^(h\d{4}|calendar|mirror\d+)\.ubi\.test$/);
      expect(ip).toMatch(/^127\.1\.\d+\.\d+$/);
    }
    const shared = hosts.size - new Set(hosts.values()).size;
    expect(shared).toBeGreaterThan(5);
    expect(shared).toBeLessThan(45);
    for (const gone of model.goneHosts) expect(hosts.has(gone)).toBe(false);
    expect(model.goneHosts.length).toBeGreaterThan(0);
  });

  it("shares addresses by sharedAddressPercent: none at 0, more at 20, the rest of the web the same", () => {
    const sharedOf = (sharedAddressPercent: number) => {
      const model = buildModel({ hosts: 400, pages: 20_000, sharedAddressPercent });
      const hosts = parseHostsFile(hostsFileText(model));
      return { model, shared: hosts.size - new Set(hosts.values()).size };
    };
    const none = sharedOf(0);
    const usual = sharedOf(5);
    const more = sharedOf(20);
    expect(none.shared).toBe(0);
    expect(more.shared).toBeGreaterThan(usual.shared);
    expect(more.shared).toBeGreaterThan(50);
    // One draw a host whatever the share: the same hosts, sizes and links.
    expect(none.model.totalUrls).toBe(usual.model.totalUrls);
    expect(none.model.hosts.map((host) => host.name)).toEqual(usual.model.hosts.map((host) => host.name));
    expect(buildModel({ hosts: 400, pages: 20_000 }).totalUrls).toBe(usual.model.totalUrls);
    expect(() => buildModel({ hosts: 40, pages: 2_000, sharedAddressPercent: 101 })).toThrow(
      /sharedAddressPercent must be an integer in \[0, 100\]/,
    );
  });

  it("serves articles of 10–30 KB of HTML with about 80% same-host links", () => {
    const model = buildModel({ hosts: 60, pages: 6000 });
    let same = 0;
    let all = 0;
    for (const [host, path] of sampleArticles(model, 40, 6)) {
      const html = body(model, host, path);
      expect(html.length).toBeGreaterThanOrEqual(10_000);
      expect(html.length).toBeLessThanOrEqual(30_000);
      expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
      expect(html).toMatch(/<title>[^<]+<\/title>/);
      expect(html).toContain("<footer>");
      const name = model.hosts[host]?.name as string;
      const { links } = extractLinks(html, `http://${name}:${PORT}${path}`);
      expect(links.length).toBeGreaterThan(10);
      all += links.length;
      same += links.filter((l) => new URL(l.url).hostname === name).length;
    }
    expect(same / all).toBeGreaterThan(0.72);
    expect(same / all).toBeLessThan(0.88);
  });

  it("gives popular articles many more in-links than typical ones (Zipf-like in-degree)", () => {
    const model = buildModel({ hosts: 10, pages: 2000, seed: 3 });
    const big = model.hosts.reduce((x, y) => (y.articles > x.articles ? y : x));
    const inDegree = new Map<string, number>();
    for (let i = 0; i < big.articles; i++) {
      const path = articlePath(model, big.index, i);
      const html = body(model, big.index, path);
      for (const link of extractLinks(html, `http://${big.name}:${PORT}${path}`).links) {
        if (/\/p\d+\.html$/.test(link.url)) inDegree.set(link.url, (inDegree.get(link.url) ?? 0) + 1);
      }
    }
    const degrees = [...inDegree.values()].sort((x, y) => y - x);
    expect(degrees[0]).toBeGreaterThan(8 * (degrees[degrees.length >> 1] as number));
  });

  it("has robots.txt variety: rules with and without a ubicrawl group, 403, 503, none", () => {
    const model = buildModel({ hosts: 100, pages: 5000 });
    const policies = new Set(model.hosts.map((h) => h.robots));
    expect([...policies].sort()).toEqual(["forbidden", "none", "rules", "rules-ubicrawl", "unavailable"]);
    const ruled = model.hosts.find((h) => h.robots === "rules-ubicrawl" && h.crawlDelaySeconds !== undefined);
    expect(ruled).toBeDefined();
    const answer = respond(model, PORT, ruled?.index ?? 0, "/robots.txt");
    expect(answer.status).toBe(200);
    const robots = parseRobots(`http://${ruled?.name}:${PORT}/robots.txt`, String(answer.body));
    const url = (path: string) => `http://${ruled?.name}:${PORT}${path}`;
    expect(robots.isAllowed(url("/private/p0.html"), "ubicrawl/1.0")).toBe(false);
    expect(robots.isAllowed(url("/private/open0.html"), "ubicrawl/1.0")).toBe(true);
    expect(robots.isAllowed(url("/drafts/d0.html"), "ubicrawl/1.0")).toBe(false);
    expect(robots.isAllowed(url("/drafts/d0.html"), "otherbot/2.0")).toBe(true);
    expect(robots.getCrawlDelay("ubicrawl")).toBe(0.01);
  });

  it("rejects invalid options with UBI_ERR_INVALID_ARGUMENT", () => {
    for (const options of [
      { hosts: 1 },
      { pages: -5 },
      { seed: 1.5 },
      { hosts: 10, pages: 10 },
      { port: 70_000 },
    ]) {
      let caught: unknown;
      try {
        buildModel(options);
      } catch (error) {
        caught = error;
      }
      expect(isUbiError(caught, ErrorCode.InvalidArgument)).toBe(true);
    }
  });
});
