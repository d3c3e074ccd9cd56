import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../support/chromium.js";
import type { IndexLine } from "./wacz-check.js";

/**
 * Opening captures of a WACZ package in ReplayWeb.page inside headless Chromium (Debian's, through
 * playwright-core: no browser download), with every request the browser sends to the network recorded,
 * and any but loopback's refused.
 */

/** A browser whose requests off loopback are recorded and aborted. */
export interface ReplayBrowser {
  readonly context: BrowserContext;
  /** Every URL the browser asked of the network, in order (the service worker's fetches included). */
  readonly requested: string[];
  /** Those not on 127.0.0.1: aborted. */
  readonly offLoopback: string[];
  close(): Promise<void>;
}

/** Launches Chromium with nothing of its own on the network, and names resolved to nothing but loopback. */
export async function launchReplayBrowser(): Promise<ReplayBrowser> {
  const browser: Browser = await launchChromium([
    // A name that escaped ReplayWeb.page's rewriting resolves to nothing rather than to the live web.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
  ]);
  const context = await browser.newContext();
  const requested: string[] = [];
  const offLoopback: string[] = [];
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    requested.push(url);
    if (new URL(url).hostname === "127.0.0.1") {
      await route.continue();
    } else {
      offLoopback.push(url);
      await route.abort("blockedbyclient");
    }
  });
  return { context, requested, offLoopback, close: () => browser.close() };
}

/** The text of the first `<h1>` of an HTML payload (the test web's pages have one, without markup). */
export function headingOf(payload: string): string | undefined {
  return /<h1>([^<&]+)<\/h1>/.exec(payload)?.[1];
}

/** A replay page still without its content this long is loaded again. */
const RELOAD_AFTER_MS = 15_000;

/**
 * Opens the capture of `line` through the replay server's embedding page and returns the text of the
 * replayed page's frame once it holds `expected` (ReplayWeb.page serves it at `…mp_/<url>`), or what
 * it held when `timeoutMs` ran out (long: the first page waits for the service worker to install and
 * load the package, which took over 30 s on CI with two test suites running at once).
 */
export function replayedText(
  context: BrowserContext,
  origin: string,
  line: IndexLine,
  expected: string,
  timeoutMs = 90_000,
): Promise<string> {
  const url = line.fields.url as string;
  return frameText(context, `${origin}/?url=${encodeURIComponent(url)}&ts=${line.timestamp}`, {
    frameUrlEnd: `mp_/${url}`,
    expected,
    timeoutMs,
  });
}

/**
 * Opens `pageUrl` (a page embedding ReplayWeb.page) and returns the text of its frame whose URL ends
 * with `frameUrlEnd` once it holds `expected`, or what it held when `timeoutMs` ran out.
 */
export async function frameText(
  context: BrowserContext,
  pageUrl: string,
  wanted: FrameWanted,
): Promise<string> {
  const page: Page = await context.newPage();
  try {
    await page.goto(pageUrl);
    return await frameTextOf(page, wanted);
  } finally {
    await page.close();
  }
}

/** The frame a replay test waits for, and what it must come to hold. */
export interface FrameWanted {
  readonly frameUrlEnd: string;
  readonly expected: string;
  /** @default 90_000 */
  readonly timeoutMs?: number;
}

/**
 * The text of `page`'s frame whose URL ends with `frameUrlEnd` once it holds `expected`, or what it held
 * when `timeoutMs` ran out; the page is loaded again each {@link RELOAD_AFTER_MS} it goes without.
 */
export async function frameTextOf(page: Page, wanted: FrameWanted): Promise<string> {
  const { frameUrlEnd, expected } = wanted;
  const deadline = Date.now() + (wanted.timeoutMs ?? 90_000);
  // A page opened while the service worker was still installing may never get its frame: such a page
  // is loaded again, as a reader would.
  let reloadAt = Date.now() + RELOAD_AFTER_MS;
  let text = "";
  while (Date.now() < deadline) {
    if (Date.now() >= reloadAt && !text.includes(expected)) {
      reloadAt = Date.now() + RELOAD_AFTER_MS;
      await page.reload().catch(() => {});
    }
    const frame = page.frames().find((candidate) => candidate.url().endsWith(frameUrlEnd));
    if (frame) {
      text = (await frame.textContent("body", { timeout: 1000 }).catch(() => null)) ?? "";
      if (text.includes(expected)) return text;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return text;
}
