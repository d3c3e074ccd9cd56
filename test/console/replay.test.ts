import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentDataDir,
  logEvent,
  readWarcRecords,
  spawnAgent,
  startWebFixture,
  type UbicrawlProcess,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  frameText,
  frameTextOf,
  headingOf,
  launchReplayBrowser,
  type ReplayBrowser,
} from "../export/replay-check.js";
import { type IndexLine, parseIndex, recordAt } from "../export/wacz-check.js";
import { chromiumMissing, skipWithout } from "../support/tools.js";
import { HTTP_FLAGS } from "./console-harness.js";

/**
 * The console's replay of recent fetches: a real agent's console lists each archived fetch with a link
 * to its replay in ReplayWeb.page, served by the agent from its own WARC files and indexes; headless
 * Chromium follows one from the dashboard and the page renders from the archive, with no request
 * leaving loopback (the test web's names do not even resolve in that browser).
 */

interface RecentFetch {
  readonly url: string;
  readonly status: number;
  readonly replay?: string;
}

const AGENT_ID = "replayer";
let fixture: WebFixture;
let agent: UbicrawlProcess;
let base: string;

beforeAll(async () => {
  fixture = await startWebFixture({ seed: 36, hosts: 6, pages: 300 });
  // Kept up once the crawl is done: the console outlives it, as an operator's agent does.
  agent = spawnAgent(fixture, { id: AGENT_ID, delayMs: 20, exitWhenDone: false, flags: HTTP_FLAGS });
  await waitFor(
    () => {
      base = String(logEvent(agent.stderr(), "console")?.url ?? "").replace(/\/$/, "");
      return base !== "";
    },
    "the agent's console",
    30_000,
  );
}, 60_000);

afterAll(async () => {
  await fixture?.stop();
});

/** The recent fetches the console lists now. */
async function recent(): Promise<RecentFetch[]> {
  const response = await fetch(`${base}/api/activity`);
  if (!response.ok) return [];
  return ((await response.json()) as { recent: RecentFetch[] }).recent;
}

/** The index a replay link's page names (its `source`), and its lines; undefined when the link is stale. */
async function replayIndexOf(link: string): Promise<{ source: string; lines: IndexLine[] } | undefined> {
  const page = await (await fetch(`${base}${link}`)).text();
  const source = /source="([^"]+)"/.exec(page)?.[1];
  if (source === undefined) return undefined;
  return { source, lines: parseIndex(await (await fetch(`${base}${source}`)).text()) };
}

/** The record an index line names, read by byte range from the files the console serves beside `source`. */
async function payloadOf(source: string, line: IndexLine): Promise<string> {
  const offset = Number(line.fields.offset);
  const length = Number(line.fields.length);
  const warcUrl = `${base}${source.replace(/index\.cdxj$/, line.fields.filename as string)}`;
  const ranged = await fetch(warcUrl, { headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
  expect(ranged.status).toBe(206);
  const bytes = Buffer.from(await ranged.arrayBuffer());
  return (await recordAt(bytes, 0, bytes.length))?.payload ?? "";
}

/** The `<h1>` of the page a replay link names, read by the test from the records the console serves. */
async function headingOfReplay(link: string): Promise<string | undefined> {
  const url = new URL(link, base).searchParams.get("url");
  const index = await replayIndexOf(link);
  const line = index?.lines.find((candidate) => candidate.fields.url === url);
  return index === undefined || line === undefined
    ? undefined
    : headingOf(await payloadOf(index.source, line));
}

/** A page whose replay index also holds the page its `<iframe>` shows, with that page's heading. */
interface FramedPage {
  readonly link: string;
  readonly frameUrl: string;
  readonly frameHeading: string;
}

/**
 * A page of the agent's WARC files whose iframe's page was captured too: its replay link, the iframe's
 * URL and heading. The iframe's source is a plain path: ReplayWeb.page leaves an absolute `HTTP://HOST/`
 * source (as the test web writes some) pointing at the live web, and a percent-escaped one unmatched.
 */
async function framedPage(): Promise<FramedPage | undefined> {
  const responses = new Map<string, { date: string; text: string }>();
  for (const record of await readWarcRecords(agentDataDir(fixture, { id: AGENT_ID }))) {
    const url = record.headers.get("warc-target-uri");
    const date = record.headers.get("warc-date");
    if (record.type !== "response" || url === undefined || date === undefined) continue;
    responses.set(url, { date, text: Buffer.from(record.block).toString("utf8") });
  }
  for (const [url, { date, text }] of responses) {
    const src = /<iframe src="(\/[^"%]+)"/.exec(text)?.[1];
    if (src === undefined) continue;
    const frameUrl = new URL(src, url).href;
    const frame = responses.get(frameUrl);
    const frameHeading = frame === undefined ? undefined : headingOf(frame.text);
    if (frameHeading === undefined) continue;
    const ts = date.replace(/\D/g, "").slice(0, 14);
    return { link: `/capture?${new URLSearchParams({ url, ts })}`, frameUrl, frameHeading };
  }
  return undefined;
}

describe("replay of recent fetches from the console", () => {
  it("links each archived fetch to its replay, served from the agent's WARC files and index", async () => {
    let fetches: RecentFetch[] = [];
    await waitFor(
      async () => {
        fetches = await recent();
        return fetches.some((fetch) => fetch.status === 200 && fetch.replay !== undefined);
      },
      "an archived fetch with a replay link",
      60_000,
    );
    for (const fetch of fetches) {
      if (fetch.status === 0) expect(fetch.replay, fetch.url).toBeUndefined();
    }
    const linked = fetches.find((fetch) => fetch.status === 200 && fetch.replay !== undefined) as RecentFetch;
    const link = linked.replay as string;
    expect(new URL(link, base).searchParams.get("url")).toBe(linked.url);
    const page = await fetch(`${base}${link}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<replay-web-page");
    // The capture's own index: one line, for that URL, in a file of the agent.
    const source = /source="([^"]+)"/.exec(await (await fetch(`${base}${link}`)).text())?.[1] as string;
    const lines = parseIndex(await (await fetch(`${base}${source}`)).text());
    expect(lines.map((line) => line.fields.url)).toContain(linked.url);
    // Only the files that index names are served: no other name, no path out of the folder.
    for (const other of ["crawl.log", "..%2Fcrawl.log", "other-20261128120000-00001-x.warc.gz"]) {
      const refused = await fetch(`${base}${source.replace(/index\.cdxj$/, other)}`);
      expect(refused.status, other).toBe(404);
    }
    expect(
      (await fetch(`${base}/capture?url=${encodeURIComponent("http://nowhere.test/")}&ts=1`)).status,
    ).toBe(404);
  }, 90_000);

  describe.skipIf(skipWithout(chromiumMissing))("in headless Chromium", () => {
    let browser: ReplayBrowser;
    beforeAll(async () => {
      browser = await launchReplayBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it("follows a recent fetch's replay link from the dashboard: the page renders from the archive", async () => {
      const dashboard = await browser.context.newPage();
      // Timers stand still: the dashboard renders once, so the link clicked stays in place.
      await dashboard.clock.install();
      await dashboard.goto(`${base}/`);
      let link: string | undefined;
      let heading: string | undefined;
      await waitFor(
        async () => {
          for (const href of await dashboard
            .locator("#recent a.replay")
            .evaluateAll((links) => links.map((anchor) => anchor.getAttribute("href") ?? ""))) {
            heading = await headingOfReplay(href);
            if (heading !== undefined) {
              link = href;
              return true;
            }
          }
          await dashboard.reload();
          return false;
        },
        "a replay link to an HTML page on the dashboard",
        60_000,
      );
      const url = new URL(link as string, base).searchParams.get("url") as string;
      const [replay] = await Promise.all([
        browser.context.waitForEvent("page"),
        dashboard.locator(`#recent a.replay[href="${link}"]`).first().click(),
      ]);
      const text = await frameTextOf(replay, { frameUrlEnd: `mp_/${url}`, expected: heading as string });
      expect(text, `the replayed page of ${url}`).toContain(heading);
      expect(browser.offLoopback).toEqual([]);
      expect(browser.requested.some((request) => request.includes("/archive/"))).toBe(true);
    }, 180_000);

    it("renders the page's iframe from the archive too: the replay's index holds the host's latest captures", async () => {
      let framed: FramedPage | undefined;
      await waitFor(
        async () => {
          // A record being appended at the end of the live file is read again at the next try.
          framed = await framedPage().catch(() => undefined);
          return framed !== undefined;
        },
        "a page whose iframe's page was captured too",
        90_000,
      );
      const { link, frameUrl, frameHeading } = framed as FramedPage;
      // The iframe's own frame, inside the replayed page's (ReplayWeb.page serves it at `…_/<url>`).
      const text = await frameText(browser.context, `${base}${link}`, {
        frameUrlEnd: `_/${frameUrl}`,
        expected: frameHeading,
      });
      expect(text, `the iframe ${frameUrl} replayed from the archive`).toContain(frameHeading);
      expect(browser.offLoopback).toEqual([]);
    }, 200_000);
  });
});
