import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentArgv, testWebAgentFlags } from "../../src/launch/index.js";
import type { CrawlLogEntry } from "../../src/storage/index.js";
import { type ExitResult, errorLine, readCrawlLogOf, runUbicrawl } from "../agent/harness.js";

/**
 * A real agent process with `--recrawl adaptive` on a loopback site whose sitemap gives its pages a
 * `<changefreq>`: the hint sets when each page is first revisited — `always` at --recrawl-min, `never`
 * (and `Weekly`, a week being longer than --recrawl-max) at --recrawl-max, a page with no hint or a
 * value of no sitemaps.org name at its share of the budget (--recrawl-min here) —, and the pages' own
 * visits decide later: those said to change `always` that never do end at --recrawl-max, those said to
 * change `never` that change at every request end at --recrawl-min.
 */
const MIN_MS = 1000;
const MAX_MS = 6000;
const PAGES = 3;

let dir: string;
let server: Server;
let port: number;
let result: ExitResult;
let log: CrawlLogEntry[];
let served = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-changefreq-"));
  server = createServer((request, response) => {
    const path = request.url ?? "/";
    const origin = `http://cf.test:${port}`;
    const send = (type: string, body: string) => response.writeHead(200, { "content-type": type }).end(body);
    if (path === "/robots.txt") {
      send("text/plain", `User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`);
    } else if (path === "/sitemap.xml") {
      const entry = (loc: string, changefreq: string) =>
        `<url><loc>${origin}${loc}</loc><changefreq>${changefreq}</changefreq></url>`;
      const entries = [];
      for (let i = 0; i < PAGES; i++)
        entries.push(entry(`/always/${i}`, "always"), entry(`/never/${i}`, "never"));
      entries.push(entry("/weekly", " Weekly "), entry("/odd", "sometimes"));
      send(
        "application/xml",
        `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries.join("")}</urlset>`,
      );
    } else if (path === "/") {
      const links = Array.from({ length: PAGES }, (_, i) => `<a href="/plain/${i}">${i}</a>`);
      send("text/html", links.join(""));
    } else if (path.startsWith("/never/")) {
      // A page its sitemap says never changes, new at every request: the hint is wrong.
      send("text/html", `<p>version ${++served}</p>`);
    } else if (/^\/(always\/\d|plain\/\d|weekly|odd)$/.test(path)) {
      // Pages that never change (no validators: each revisit is a 200 with the same payload).
      send("text/html", `<p>${path}</p>`);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(join(dir, "hosts"), "127.0.0.1 cf.test\n");
  const data = join(dir, "data");
  result = await runUbicrawl(
    agentArgv({
      ...testWebAgentFlags(join(dir, "hosts")),
      id: "hinted",
      data,
      seeds: [`http://cf.test:${port}/`],
      recrawl: "adaptive",
      "recrawl-min": "1s",
      "recrawl-max": "6s",
      "recrawl-budget": 100,
      "recrawl-horizon": "16s",
    }),
  ).waitForExit(60_000);
  log = await readCrawlLogOf(data);
}, 90_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** The crawl log's lines of the page at `path`, in order of visit. */
function visitsOf(path: string): CrawlLogEntry[] {
  return log
    .filter((entry) => entry.url === `http://cf.test:${port}${path}`)
    .sort((a, b) => (a.visits as number) - (b.visits as number));
}

/** The interval a line's visit planned to the next one, ms. */
function plannedMs(entry: CrawlLogEntry | undefined): number {
  return Date.parse(entry?.nextFetch as string) - Date.parse(entry?.ts as string);
}

/** The last interval planned for the page at `path` once its visits gave an estimate (from its 4th visit). */
function lastEstimatedMs(path: string): number {
  const planned = visitsOf(path).filter(
    (entry) => (entry.visits as number) >= 4 && typeof entry.nextFetch === "string",
  );
  expect(planned.length, `${path} planned from its own estimate`).toBeGreaterThan(0);
  return plannedMs(planned.at(-1));
}

describe("--recrawl adaptive with sitemap changefreq hints", () => {
  it("logs each page's changefreq with its first visit, a value of no sitemaps.org name left out", () => {
    expect(result.code, errorLine(result.stderr)).toBe(0);
    expect(visitsOf("/always/0")[0]).toMatchObject({ visits: 1, changefreq: "always" });
    expect(visitsOf("/never/0")[0]).toMatchObject({ visits: 1, changefreq: "never" });
    expect(visitsOf("/weekly")[0]).toMatchObject({ visits: 1, changefreq: "weekly" });
    expect(visitsOf("/odd")[0]?.changefreq).toBeUndefined();
    expect(visitsOf("/plain/0")[0]?.changefreq).toBeUndefined();
  });

  it("revisits a page first when its changefreq says, within --recrawl-min and --recrawl-max", () => {
    for (let i = 0; i < PAGES; i++) {
      const always = visitsOf(`/always/${i}`);
      const never = visitsOf(`/never/${i}`);
      expect(plannedMs(always[0])).toBe(MIN_MS);
      expect(plannedMs(never[0])).toBe(MAX_MS);
      // And so it happened: the first revisit came no sooner than planned, the hinted ones in order.
      const firstRevisit = (lines: CrawlLogEntry[]) =>
        Date.parse(lines[1]?.ts as string) - Date.parse(lines[0]?.ts as string);
      expect(firstRevisit(always)).toBeGreaterThanOrEqual(MIN_MS);
      expect(firstRevisit(never)).toBeGreaterThanOrEqual(MAX_MS);
      expect(firstRevisit(always)).toBeLessThan(firstRevisit(never));
      // Without a hint, the page's share of an ample budget: the shortest interval.
      expect(plannedMs(visitsOf(`/plain/${i}`)[0])).toBe(MIN_MS);
    }
    expect(plannedMs(visitsOf("/weekly")[0])).toBe(MAX_MS);
    expect(plannedMs(visitsOf("/odd")[0])).toBe(MIN_MS);
  });

  it("follows each page's own estimate once its visits give one, whatever its changefreq said", () => {
    for (let i = 0; i < PAGES; i++) {
      // Said to change always, found unchanged at every visit: the longest interval.
      expect(lastEstimatedMs(`/always/${i}`)).toBe(MAX_MS);
      // Said to change never, found changed at every visit: the shortest.
      expect(lastEstimatedMs(`/never/${i}`)).toBe(MIN_MS);
      expect(lastEstimatedMs(`/plain/${i}`)).toBe(MAX_MS);
    }
  });
});
