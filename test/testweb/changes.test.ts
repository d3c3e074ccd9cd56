import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  changeTimes,
  isChanging,
  meanChangeIntervalMs,
  notModified,
  type PageChanges,
  pageVersion,
  startTestWeb,
} from "../../src/testweb/index.js";
import type { RunningTestWeb } from "../../src/testweb/server.js";

const CHANGES: PageChanges = { everyMs: 1000, percent: 50 };
const HTML = { body: Buffer.from("<p>x</p>"), contentType: "text/html; charset=utf-8" };

describe("changing pages (pure)", () => {
  it("makes about the given share of pages change, each one by a new version every period", () => {
    const targets = Array.from({ length: 400 }, (_, i) => `/s0/p${i}.html`);
    const changing = targets.filter((target) => isChanging(CHANGES, target));
    expect(changing.length / targets.length).toBeGreaterThan(0.4);
    expect(changing.length / targets.length).toBeLessThan(0.6);
    const target = changing[0] as string;
    const v0 = pageVersion(CHANGES, 0, target, HTML, 999);
    const v1 = pageVersion(CHANGES, 0, target, HTML, 1000);
    expect([v0.version, v1.version]).toEqual([0, 1]);
    expect(v1.etag).not.toBe(v0.etag);
    expect(Date.parse(v1.lastModified) - Date.parse(v0.lastModified)).toBe(1000);
    const still = targets.find((t) => !isChanging(CHANGES, t)) as string;
    expect(pageVersion(CHANGES, 0, still, HTML, 50_000).etag).toBe(
      pageVersion(CHANGES, 0, still, HTML, 0).etag,
    );
    // Only HTML changes: an image is the same for ever.
    const image = { body: Buffer.from("png"), contentType: "image/png" };
    expect(pageVersion(CHANGES, 0, target, image, 50_000).version).toBe(0);
  });

  it("answers 304 to a matching If-None-Match first, else to an If-Modified-Since no earlier than Last-Modified", () => {
    const page = { etag: '"abc"', lastModified: new Date(10_000).toUTCString() };
    expect(notModified(page, '"abc"', undefined)).toBe(true);
    expect(notModified(page, 'W/"abc", "zzz"', undefined)).toBe(true);
    expect(notModified(page, '"old"', new Date(20_000).toUTCString())).toBe(false);
    expect(notModified(page, undefined, new Date(10_000).toUTCString())).toBe(true);
    expect(notModified(page, undefined, new Date(9_000).toUTCString())).toBe(false);
    expect(notModified(page, undefined, undefined)).toBe(false);
  });
});

describe("pages changing as Poisson processes", () => {
  const POISSON: PageChanges = { everyMs: 1000, percent: 60, process: "poisson", spread: 10 };
  const targets = Array.from({ length: 400 }, (_, i) => `/s0/p${i}.html`);
  const changing = targets.filter((target) => isChanging(POISSON, target));

  it("gives each changing page its own mean interval, log-uniform within everyMs ÷× spread, and none to the others", () => {
    const means = changing.map((target) => meanChangeIntervalMs(POISSON, target) as number);
    expect(Math.min(...means)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...means)).toBeLessThanOrEqual(10_000);
    // Log-uniform: about a quarter of the pages in each quarter of the log range.
    const low = means.filter((mean) => mean < 1000 / Math.sqrt(10)).length / means.length;
    expect(low).toBeGreaterThan(0.15);
    expect(low).toBeLessThan(0.35);
    const still = targets.find((t) => !isChanging(POISSON, t)) as string;
    expect(meanChangeIntervalMs(POISSON, still)).toBeUndefined();
    expect(changeTimes(POISSON, 0, still, 1_000_000)).toEqual([]);
  });

  it("draws each page's change times as the same Poisson process every time, at its rate", () => {
    const target = changing[0] as string;
    const mean = meanChangeIntervalMs(POISSON, target) as number;
    const horizon = mean * 4000;
    const times = changeTimes(POISSON, 5_000, target, 5_000 + horizon);
    // About horizon / mean changes (4,000; a Poisson count's deviation is 63).
    expect(Math.abs(times.length - 4000)).toBeLessThan(300);
    expect(times.every((t, i) => t > (times[i - 1] ?? 5_000) && t <= 5_000 + horizon)).toBe(true);
    // Exponential gaps: their deviation is their mean.
    const gaps = times.map((t, i) => t - (times[i - 1] ?? 5_000));
    const average = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const deviation = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - average) ** 2, 0) / gaps.length);
    expect(Math.abs(deviation / average - 1)).toBeLessThan(0.1);
    // The same times asked again, or for a shorter time, from any starting point of the asking.
    expect(changeTimes(POISSON, 5_000, target, 5_000 + horizon / 2)).toEqual(
      times.filter((t) => t <= 5_000 + horizon / 2),
    );
  });

  it("serves the version the change times give, dated by the last change", () => {
    const target = changing[1] as string;
    const times = changeTimes(POISSON, 0, target, 60_000);
    const at = (times[2] as number) + 1;
    const page = pageVersion(POISSON, 0, target, HTML, at);
    expect(page.version).toBe(3);
    expect(page.lastModified).toBe(new Date(times[2] as number).toUTCString());
    expect(pageVersion(POISSON, 0, target, HTML, (times[0] as number) - 1).version).toBe(0);
  });

  it("refuses an unknown process or a spread out of range", async () => {
    const web = { hosts: 4, pages: 40, seedCount: 1, mirrors: 0, trap: false };
    await expect(
      startTestWeb({ ...web, changes: { everyMs: 1000, percent: 10, process: "weekly" as "poisson" } }),
    ).rejects.toThrow(/changes.process must be one of periodic, poisson/);
    await expect(
      startTestWeb({ ...web, changes: { everyMs: 1000, percent: 10, spread: 0.5 } }),
    ).rejects.toThrow(/changes.spread/);
  });
});

/** A GET of `seed`'s page sent straight to `ip` (no resolver), its name in Host: status and headers. */
function get(
  ip: string,
  seed: URL,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: ip, port: seed.port, path: seed.pathname, headers: { host: seed.host, ...headers } },
      (res) => {
        res.resume();
        res.once("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.once("error", reject);
    req.end();
  });
}

/** The loopback address the web's hosts file gives `name`. */
function addressOf(web: RunningTestWeb, name: string): string {
  const line = web
    .hostsFileText()
    .split("\n")
    .find((entry) => entry.split(/\s+/)[1] === name);
  return line?.split(/\s+/)[0] ?? "";
}

describe("a test web with changing pages", () => {
  let web: RunningTestWeb | undefined;
  afterEach(async () => {
    await web?.stop();
  });

  it("serves validators, answers a matching conditional GET with 304, and records it as conditional", async () => {
    web = await startTestWeb({
      hosts: 4,
      pages: 40,
      seedCount: 1,
      mirrors: 0,
      trap: false,
      changes: CHANGES,
    });
    const seed = new URL(web.seeds[0] as string);
    const ip = addressOf(web, seed.hostname);
    const first = await get(ip, seed);
    expect(first.status).toBe(200);
    const etag = first.headers.etag as string;
    const lastModified = first.headers["last-modified"] as string;
    expect(etag).toMatch(/^"[0-9a-f]{20}"$/);
    expect(Number.isNaN(Date.parse(lastModified))).toBe(false);
    const again = await get(ip, seed, { "if-none-match": etag });
    if (isChanging(CHANGES, seed.pathname) && again.status === 200) {
      // A new version came out between the two requests: its ETag is new.
      expect(again.headers.etag).not.toBe(etag);
    } else {
      expect(again.status).toBe(304);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers["content-length"]).toBeUndefined();
    }
    expect(web.recorder.conditionalCounts().get(`${seed.origin}${seed.pathname}`)).toBe(1);
  });

  it("serves no validators without the option, so nothing else changes", async () => {
    web = await startTestWeb({ hosts: 4, pages: 40, seedCount: 1, mirrors: 0, trap: false });
    const seed = new URL(web.seeds[0] as string);
    const response = await get(addressOf(web, seed.hostname), seed);
    expect(response.status).toBe(200);
    expect(response.headers.etag).toBeUndefined();
    expect(response.headers["last-modified"]).toBeUndefined();
  });
});
