import { setTimeout as delay } from "node:timers/promises";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatStats } from "../../src/cli/stats-command.js";
import { type CrawlLogEntry, SERVER_NOT_MODIFIED_PROFILE } from "../../src/storage/index.js";
import { isChanging, type PageChanges } from "../../src/testweb/index.js";
import type { AgentStats } from "../../src/transport/index.js";
import {
  agentDataDir,
  errorLine,
  isRobotsUrl,
  logEvent,
  readCrawlLogOf,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  type UbicrawlProcess,
  type WebFixture,
} from "../agent/harness.js";
import { HTTP_FLAGS, type MetricFamily, scrape } from "../console/console-harness.js";
import { launchChromium } from "../support/chromium.js";
import { chromiumMissing, skipWithout } from "../support/tools.js";

/**
 * A real agent process in continuous mode (`--recrawl fixed --recrawl-interval 2s`) over a small test
 * web whose pages partly change every 1.5 s: it fetches every page again, conditionally, and each
 * revisit of a page that never changes is a 304 written as a server-not-modified revisit record.
 */
const CHANGES: PageChanges = { everyMs: 1500, percent: 40 };
const AGENT = { id: "recrawler" };

describe("--recrawl fixed over a changing web", () => {
  let fixture: WebFixture;
  let exit: { code: number | null; stderr: string };
  /**
   * `/api/stats` and `/metrics` read while the agent ran, once it had revisited pages, and the
   * dashboard's revisits line as headless Chromium drew it then (when Chromium is here).
   */
  let live: { stats: AgentStats; metrics: MetricFamily[]; dashboard?: string } | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!chromiumMissing) browser = await launchChromium();
    fixture = await startWebFixture({
      hosts: 5,
      pages: 60,
      seedCount: 1,
      mirrors: 0,
      trap: false,
      changes: CHANGES,
    });
    const agent = spawnAgent(fixture, {
      ...AGENT,
      flags: [
        "--recrawl",
        "fixed",
        "--recrawl-interval",
        "2s",
        "--recrawl-horizon",
        "10s",
        "--sitemaps",
        "off",
        ...HTTP_FLAGS,
      ],
    });
    live = await readWhileRevisiting(agent);
    exit = await agent.waitForExit(60_000);
  }, 90_000);

  /** Polls the agent's console until its stats show a changed and a not-modified revisit; then scrapes. */
  async function readWhileRevisiting(agent: UbicrawlProcess) {
    let base = "";
    while (!agent.exited) {
      base ||= String(logEvent(agent.stderr(), "console")?.url ?? "").replace(/\/$/, "");
      if (base !== "") {
        const response = await fetch(`${base}/api/stats`);
        // 503 until the agent is ready.
        const stats = response.ok
          ? ((await response.json()) as { agents: AgentStats[] }).agents[0]
          : undefined;
        if ((stats?.revisits?.changed ?? 0) > 0 && (stats?.revisits?.notModified ?? 0) > 0 && stats) {
          return { stats, metrics: await scrape(base), ...(await dashboardRevisits(base)) };
        }
      }
      await delay(50);
    }
    return undefined;
  }

  /** The dashboard's revisits line, as headless Chromium draws it from the running agent. */
  async function dashboardRevisits(base: string): Promise<{ dashboard?: string }> {
    if (!browser) return {};
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/`);
      const line = page.locator('#partition dd[data-fact="revisits"]');
      await line.waitFor({ timeout: 10_000 });
      return { dashboard: (await line.textContent()) ?? "" };
    } finally {
      await page.close();
    }
  }

  afterAll(async () => {
    await browser?.close();
    await fixture?.stop();
  });

  /** The crawl log's line of each URL's first visit, by URL. */
  async function firstVisits(): Promise<Map<string, CrawlLogEntry>> {
    const log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    return new Map(log.filter((entry) => entry.visits === 1).map((entry) => [entry.url, entry]));
  }

  it("exits once its horizon is over", () => {
    expect(exit.code, errorLine(exit.stderr)).toBe(0);
  });

  it("fetches pages again, with conditional headers the server saw", async () => {
    const firsts = await firstVisits();
    const served = servedPages(fixture.web.recorder);
    const again = [...served].filter(([url, count]) => count > 1 && firsts.get(url)?.status === 200);
    expect(again.length).toBeGreaterThan(firsts.size / 2);
    const conditional = fixture.web.recorder.conditionalCounts();
    for (const [url, count] of again) {
      // Every fetch after the first of a page that answered 200 (with validators) is conditional.
      expect(conditional.get(url), url).toBe(count - 1);
    }
    // A page that had no validators (an error page) is fetched again plainly.
    for (const [url, first] of firsts)
      if (first.status !== 200) expect(conditional.has(url), url).toBe(false);
  });

  it("logs each revisit as what the server's ground truth says it was", async () => {
    const log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    const firsts = await firstVisits();
    const revisits = log.filter((entry) => entry.recrawl !== undefined);
    expect(revisits.length).toBeGreaterThan(0);
    const kinds = new Set<unknown>();
    for (const entry of revisits) {
      const path = entry.url.slice(entry.url.indexOf("/", entry.url.indexOf("//") + 2));
      // Visits are 2 s apart and changing pages (HTML ones) change every 1.5 s: each revisit of one
      // finds it changed; any other page is not modified.
      const html = firsts.get(entry.url)?.contentType === "text/html";
      const changing = html && isChanging(CHANGES, path);
      expect(entry.recrawl, entry.url).toBe(changing ? "changed" : "not-modified");
      expect(entry.visits as number).toBeGreaterThan(1);
      // The page's rate estimated from its own visits, from its third on (two intervals).
      if ((entry.visits as number) < 3) expect(entry.changesPerDay, entry.url).toBeUndefined();
      else if (changing) expect(entry.changesPerDay as number, entry.url).toBeGreaterThan(0);
      else expect(entry.changesPerDay, entry.url).toBe(0);
      kinds.add(entry.recrawl);
    }
    expect(kinds).toContain("changed");
    expect(kinds).toContain("not-modified");
    // The first visit of every page plans the next one.
    const planned = log.filter((entry) => entry.visits === 1 && !isRobotsUrl(entry.url));
    expect(planned.every((entry) => typeof entry.nextFetch === "string")).toBe(true);
  });

  it("says in its stop record what its revisits found, as the crawl log does", async () => {
    const log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    const stopped = logEvent(exit.stderr, "stopped");
    const count = (kind: string) => log.filter((entry) => entry.recrawl === kind).length;
    expect(stopped?.recrawl).toMatchObject({
      revisited: log.filter((entry) => (entry.visits as number) > 1).length,
      notModified: count("not-modified"),
      unchanged: count("unchanged"),
      changed: count("changed"),
      planned: 0,
    });
    expect(stopped?.msg).toMatch(/revisits \(\d+ not modified, 0 unchanged, \d+ changed\), 0 planned/);
  });

  it.skipIf(skipWithout(chromiumMissing))("draws its revisits on the console's dashboard", () => {
    expect(live?.dashboard, "drawn while it ran").toMatch(
      /^estimated freshness (0\.\d\d|1\.00) \(\d+ pages sampled\); \d+ planned(, the earliest \d+\.\d s overdue)?; \d+ revisited: \d+ not modified \(304\), \d+ unchanged, [1-9]\d* changed, \d+ missed; 0 histories received with hosts$/,
    );
  });

  it("shows its revisits in /api/stats, /metrics and the stats report while it runs", () => {
    const revisits = live?.stats.revisits;
    expect(revisits, "read while it ran").toBeDefined();
    if (!live || !revisits) return;
    expect(revisits.revisited).toBeGreaterThanOrEqual(revisits.notModified + revisits.changed);
    expect(revisits.queued).toBeGreaterThanOrEqual(revisits.revisited);
    expect(revisits.planned).toBeGreaterThan(0);
    // Scraped just after the stats: the counts can only have grown.
    const sample = (name: string, outcome?: string) =>
      live?.metrics
        .find((family) => family.name === name)
        ?.metrics.find((metric) => outcome === undefined || metric.labels?.outcome === outcome);
    expect(Number(sample("ubicrawl_revisits_total", "not_modified")?.value)).toBeGreaterThanOrEqual(
      revisits.notModified,
    );
    expect(Number(sample("ubicrawl_revisits_total", "changed")?.value)).toBeGreaterThanOrEqual(
      revisits.changed,
    );
    expect(Number(sample("ubicrawl_revisits_queued_total")?.value)).toBeGreaterThanOrEqual(revisits.queued);
    expect(Number(sample("ubicrawl_revisits_planned")?.value)).toBeGreaterThan(0);
    expect(sample("ubicrawl_revisit_overdue_seconds")).toBeDefined();
    // Every page has a Last-Modified date: a rate hint from its first visit, so each is in the estimate.
    expect(revisits.freshnessPages).toBeGreaterThan(0);
    expect(revisits.estimatedFreshness).toBeGreaterThan(0);
    expect(revisits.estimatedFreshness).toBeLessThanOrEqual(1);
    const gauge = Number(sample("ubicrawl_revisit_estimated_freshness")?.value);
    expect(gauge).toBeGreaterThan(0);
    expect(gauge).toBeLessThanOrEqual(1);
    expect(formatStats([live.stats], false)).toMatch(
      /^ {2}estimated freshness of the share: [01]\.\d{3} \(over \d+ pages sampled\)$/m,
    );
    // A fixed interval spends no budget (that of --recrawl adaptive: recrawl-budget-cluster.test.ts).
    expect(revisits.budgetPages).toBe(0);
    expect(sample("ubicrawl_revisit_budget")).toBeUndefined();
    expect(formatStats([live.stats], false)).not.toMatch(/revisit budget/);
    expect(formatStats([live.stats], false)).toMatch(
      new RegExp(
        `^ {2}revisits: ${revisits.revisited} answered \\(${revisits.notModified} not modified, ${revisits.unchanged} unchanged, ${revisits.changed} changed, ${revisits.missed} failed\\), ${revisits.queued} queued, ${revisits.planned} planned`,
        "m",
      ),
    );
  });

  it("writes 304s as server-not-modified revisits of the page's stored response, read by warcio", async () => {
    const records = await readWarcRecords(agentDataDir(fixture, AGENT));
    const responses = new Map<string, string>();
    for (const record of records) {
      if (record.type === "response") {
        responses.set(
          record.headers.get("warc-record-id") ?? "",
          record.headers.get("warc-target-uri") ?? "",
        );
      }
    }
    const notModified = records.filter(
      (record) =>
        record.type === "revisit" && record.headers.get("warc-profile") === SERVER_NOT_MODIFIED_PROFILE,
    );
    const log = await readCrawlLogOf(agentDataDir(fixture, AGENT));
    expect(notModified.length).toBe(log.filter((entry) => entry.recrawl === "not-modified").length);
    for (const record of notModified) {
      const uri = record.headers.get("warc-target-uri") ?? "";
      expect(Buffer.from(record.block).toString("latin1")).toMatch(/^HTTP\/1\.1 304 /);
      // The response holding the payload: this URL's first, or an alias's with the same payload.
      const refersTo = record.headers.get("warc-refers-to-target-uri");
      expect(responses.get(record.headers.get("warc-refers-to") ?? ""), uri).toBe(refersTo);
      expect(record.headers.has("warc-payload-digest")).toBe(false);
    }
  });
});
