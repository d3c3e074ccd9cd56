import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGzip, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import { type ExitResult, logEvent, readCrawlLogOf, runUbicrawl } from "./harness.js";

/**
 * Sitemaps listed in robots.txt: a sitemap index leading to a gzipped urlset and a plain-text sitemap
 * whose pages no link reaches, a sitemap on another host (cross-submitted by site.test's robots.txt),
 * and the bombs around them — a gzip of 1 GiB, an index of 10,000 sitemaps, sitemaps and pages of
 * hosts that did not submit them. The pages are crawled (robots.txt still obeyed, their lastmod kept
 * in the crawl log); the bombs cost a bounded number of requests and bytes.
 */

const ORPHANS = 30;
const MANY = 10_000;
/** Sitemap files queued per host and run (SitemapReader's default). */
const MAX_SITEMAPS_PER_HOST = 100;

let dir: string;
let server: Server;
let port: number;
let bomb: Buffer;
const requested: { host: string; path: string }[] = [];
let result: ExitResult;
let data: string;

/** A gzip of 1 GiB of blanks after an urlset's start tag, made in slices (about 1 MB). */
async function gzipBomb(): Promise<Buffer> {
  const gzip = createGzip({ level: 1 });
  const chunks: Buffer[] = [];
  gzip.on("data", (chunk: Buffer) => chunks.push(chunk));
  gzip.write("<urlset>");
  const blanks = Buffer.alloc(1024 * 1024, 0x20);
  for (let i = 0; i < 1024; i++) if (!gzip.write(blanks)) await once(gzip, "drain");
  gzip.end();
  await once(gzip, "end");
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-sitemaps-"));
  bomb = await gzipBomb();
  server = createServer((request, response) => {
    const host = (request.headers.host ?? "").split(":")[0] ?? "";
    const path = request.url ?? "/";
    requested.push({ host, path });
    const origin = `http://${host}:${port}`;
    const send = (type: string, body: string | Buffer) =>
      response.writeHead(200, { "content-type": type }).end(body);
    if (host === "other.test" && path === "/site-sitemap.xml") {
      // A CDN's sitemap of site.test: site.test's pages are taken, a third host's are not.
      const locs = [0, 1, 2].map((i) => `http://site.test:${port}/cross/${i}`);
      locs.push(`http://third.test:${port}/x`);
      send(
        "application/xml",
        `<urlset>${locs.map((loc) => `<url><loc>${loc}</loc></url>`).join("")}</urlset>`,
      );
      return;
    }
    if (host !== "site.test") {
      response.writeHead(404).end();
      return;
    }
    if (path === "/robots.txt") {
      send(
        "text/plain",
        `User-agent: *\nDisallow: /private/\nSitemap: ${origin}/sitemap_index.xml\nSitemap: http://other.test:${port}/site-sitemap.xml\n`,
      );
    } else if (path === "/") {
      send("text/html", '<a href="/linked">linked</a>');
    } else if (path === "/linked" || /^\/(orphan|cross)\/\d+$/.test(path)) {
      send("text/html", "<p>a page</p>");
    } else if (path === "/sitemap_index.xml") {
      const sitemaps = [
        `${origin}/sitemaps/pages.xml.gz`,
        `${origin}/sitemaps/more.txt`,
        `${origin}/sitemaps/bomb.xml.gz`,
        `${origin}/sitemaps/many.xml`,
        `http://other.test:${port}/sitemap2.xml`,
      ];
      send(
        "application/xml",
        `<sitemapindex>${sitemaps.map((loc) => `<sitemap><loc>${loc}</loc></sitemap>`).join("")}</sitemapindex>`,
      );
    } else if (path === "/sitemaps/pages.xml.gz") {
      const urls = Array.from(
        { length: ORPHANS - 5 },
        (_, i) =>
          `<url><loc>${origin}/orphan/${i}</loc><lastmod>2026-11-${String(i + 1).padStart(2, "0")}</lastmod></url>`,
      );
      urls.push(
        `<url><loc>${origin}/private/secret</loc></url>`,
        `<url><loc>http://other.test:${port}/x</loc></url>`,
      );
      send(
        "application/x-gzip",
        gzipSync(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.join("")}</urlset>`),
      );
    } else if (path === "/sitemaps/more.txt") {
      send(
        "text/plain",
        Array.from({ length: 5 }, (_, i) => `${origin}/orphan/${ORPHANS - 5 + i}`).join("\n"),
      );
    } else if (path === "/sitemaps/bomb.xml.gz") {
      send("application/x-gzip", bomb);
    } else if (path === "/sitemaps/many.xml") {
      const entries = Array.from(
        { length: MANY },
        (_, i) => `<sitemap><loc>${origin}/many/${i}.xml</loc></sitemap>`,
      );
      send("application/xml", `<sitemapindex>${entries.join("")}</sitemapindex>`);
    } else if (path.startsWith("/many/")) {
      send("application/xml", "<urlset></urlset>");
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(join(dir, "hosts"), "127.0.0.1 site.test\n127.0.0.1 other.test\n127.0.0.1 third.test\n");
  data = join(dir, "data");
  result = await runUbicrawl(
    agentArgv({
      ...testWebAgentFlags(join(dir, "hosts")),
      id: "mapped",
      data,
      seeds: [`http://site.test:${port}/`],
    }),
  ).waitForExit(120_000);
}, 180_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe("sitemaps listed in robots.txt", () => {
  it("bring in the pages only they list, robots.txt obeyed, lastmod kept", async () => {
    expect(result.code, result.stderr).toBe(0);
    const log = await readCrawlLogOf(data);
    const orphans = log.filter((entry) => entry.url.includes("/orphan/"));
    expect(orphans.map((entry) => entry.status)).toEqual(Array(ORPHANS).fill(200));
    expect(orphans.find((entry) => entry.url.endsWith("/orphan/0"))?.lastmod).toBe("2026-11-01");
    expect(orphans.find((entry) => entry.url.endsWith(`/orphan/${ORPHANS - 1}`))?.lastmod).toBeUndefined();
    expect(log.find((entry) => entry.url.endsWith("/linked"))?.status).toBe(200);
    // Sitemap fetches are marked as such, with the number of entries they listed.
    const index = log.find((entry) => entry.url.endsWith("/sitemap_index.xml"));
    expect(index).toMatchObject({ sitemap: true, links: 5 });
    expect(requested.some((request) => request.path.startsWith("/private/"))).toBe(false);
  });

  it("follow a sitemap that robots.txt lists on another host, for the listing host's pages only", async () => {
    const log = await readCrawlLogOf(data);
    expect(log.filter((entry) => entry.url.includes("/cross/")).map((entry) => entry.status)).toEqual([
      200, 200, 200,
    ]);
    // The other host is asked for its robots.txt, that sitemap and, as its robots.txt (a 404) names
    // none, /sitemap.xml; the third host for nothing.
    expect(
      requested
        .filter((request) => request.host === "other.test")
        .map((request) => request.path)
        .sort(),
    ).toEqual(["/robots.txt", "/site-sitemap.xml", "/sitemap.xml"]);
    expect(requested.filter((request) => request.host === "third.test")).toEqual([]);
  });

  it("take nothing of a host that did not submit the sitemap: from an index or a urlset", () => {
    // other.test's sitemap in site.test's index, other.test/x in site.test's urlset, third.test/x in
    // the sitemap other.test serves for site.test.
    const dropped = logEvent(result.stderr, "stopped")?.dropped as Record<string, number>;
    expect(dropped["sitemap-elsewhere"]).toBe(3);
  });

  it("stay bounded: an index of 10,000 sitemaps costs the per-host budget, a gzip bomb one request", () => {
    const sitemapFetches = requested.filter(
      (request) => request.path.startsWith("/sitemap") || request.path.startsWith("/many/"),
    );
    expect(sitemapFetches.length).toBeLessThanOrEqual(MAX_SITEMAPS_PER_HOST);
    const dropped = logEvent(result.stderr, "stopped")?.dropped as Record<string, number>;
    // The two sitemaps robots.txt lists and the four on-site ones the index lists take 6 of site.test's
    // budget; of the 10,000, what is left of it is queued and the rest dropped.
    expect(dropped["sitemap-limit"]).toBe(MANY - (MAX_SITEMAPS_PER_HOST - 6));
    expect(requested.filter((request) => request.path === "/sitemaps/bomb.xml.gz")).toHaveLength(1);
  });
});
