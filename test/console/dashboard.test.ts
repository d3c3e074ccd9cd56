import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebFixture, type WebFixture, waitFor } from "../agent/harness.js";
import { type ClusterAgent, startCluster } from "../cluster/cluster-harness.js";
import { launchChromium } from "../support/chromium.js";
import { chromiumMissing, skipWithout } from "../support/tools.js";
import { consoleUrlOf, HTTP_FLAGS } from "./console-harness.js";

/** Debian's chromium (no browser download: playwright-core drives the system's). */

/**
 * A real browser on a real cluster's dashboard: three agents in the ring and a rising page count; one
 * SIGKILLed shows suspected while its hosts are held for it, then gone once the others took them.
 */
describe.skipIf(skipWithout(chromiumMissing))("the dashboard in headless Chromium", () => {
  let fixture: WebFixture;
  let agents: ClusterAgent[];
  let browser: Browser;

  beforeAll(async () => {
    // Long enough a crawl to watch (20 ms between requests to a host), and a 3 s takeover grace so a
    // dead agent is seen suspected before it is gone.
    fixture = await startWebFixture({ hosts: 40, pages: 6000, responseDelayMs: 2 });
    agents = await startCluster(fixture, 3, [
      ...HTTP_FLAGS,
      "--delay-ms",
      "20",
      "--takeover-delay-ms",
      "3000",
    ]);
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await fixture?.stop();
  });

  it("draws the cluster's pages per second on its first render, not after a later refresh", async () => {
    const [watched] = agents as [ClusterAgent];
    const base = await consoleUrlOf(watched);
    // The agent has kept the cluster's rate for a few seconds already.
    await waitFor(
      async () => {
        const activity = (await (await fetch(`${base}/api/activity`)).json()) as {
          clusterPagesPerSecond: { pages: number | null }[];
        };
        return activity.clusterPagesPerSecond.filter((point) => (point.pages ?? 0) > 0).length >= 3;
      },
      "three seconds of the cluster's rate kept by the agent",
      20_000,
    );
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // Timers stand still: the page renders once, from its first answers, and never refreshes.
    await page.clock.install();
    await page.goto(`${base}/`);
    await waitFor(
      async () => (await page.getAttribute("#connection", "class")) === "badge ok",
      "the first render",
      10_000,
    );
    // uPlot's data of the chart: [seconds, this agent, cluster]; the cluster series has a line.
    const cluster = (await page.evaluate("chart.data[2]")) as (number | null)[];
    expect(cluster.filter((pages) => pages !== null && pages > 0).length).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows the ring and a rising page count, then a killed agent suspected, then gone", async () => {
    const [watched, , victim] = agents as [ClusterAgent, ClusterAgent, ClusterAgent];
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${await consoleUrlOf(watched)}/`);
    const statusOf = (id: string) =>
      page.locator(`#agents tr[data-agent="${id}"]`).getAttribute("data-status", { timeout: 1000 });
    await waitFor(
      async () => (await page.locator('#agents tr[data-status="alive"]').count()) === 3,
      "three agents alive on the dashboard",
      20_000,
    );
    expect(await page.locator("#ring path").count()).toBe(3);
    expect(await page.textContent('#partition dd[data-fact="duplicates"]')).toMatch(
      /^[\d,]+ pages stored as revisits \(.+ not stored again\), [\d,]+ copies left by races, [\d,]+ stored unchecked$/,
    );
    // No --recrawl: no revisits line.
    expect(await page.locator('#partition dd[data-fact="revisits"]').count()).toBe(0);
    const pages = async () => Number((await page.textContent("#total-pages"))?.replaceAll(",", ""));
    const first = await pages();
    await waitFor(async () => (await pages()) > first, "the page count to rise", 15_000);
    expect(await page.locator("#rate-chart canvas").count()).toBeGreaterThan(0);
    expect(await page.locator("#recent tbody tr").count()).toBeGreaterThan(0);

    victim.process.kill("SIGKILL");
    const killedAt = Date.now();
    await waitFor(async () => (await statusOf(victim.id)) === "suspected", "the victim suspected", 15_000);
    const suspectedAfterMs = Date.now() - killedAt;
    await waitFor(async () => (await statusOf(victim.id)) === "gone", "the victim gone", 20_000);
    // Suspected within the detector's 1.2 s plus a poll or two; gone once the 3 s grace is over.
    expect(suspectedAfterMs).toBeLessThan(10_000);
    expect(await page.locator("#ring path").count()).toBe(2);
    expect(await statusOf(watched.id)).toBe("alive");
    expect(await page.textContent("#total-suspected")).toBe("1");
    // /metrics says the same: the victim is gone (its hosts taken over), not merely suspected.
    const metrics = await (await fetch(`${await consoleUrlOf(watched)}/metrics`)).text();
    expect(metrics).toMatch(/^ubicrawl_peers\{status="gone"\} 1$/m);
    expect(metrics).toMatch(/^ubicrawl_peers\{status="suspected"\} 0$/m);

    // UBICRAWL_DASHBOARD_SCREENSHOT=docs/console.png refreshes the README's picture.
    const screenshot = process.env.UBICRAWL_DASHBOARD_SCREENSHOT ?? join(fixture.dir, "dashboard.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect((await stat(screenshot)).size).toBeGreaterThan(20_000);
    expect(errors).toEqual([]);
  }, 120_000);
});
