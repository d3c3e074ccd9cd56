import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CrawlDelayBound } from "../../src/agent/crawl-delay-bound.js";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { HostRuntimes } from "../../src/agent/host-runtime.js";
import { UnsyncedPages } from "../../src/agent/unsynced-pages.js";
import {
  addressKnown,
  allowedByRobots,
  checkTakenUrl,
  crawlDelayWithinBound,
  hostNotAbandoned,
  notBlacklisted,
  notFetchedBefore,
  originTlsUsable,
  robotsAnswered,
  stillMayFetch,
  type TakenUrl,
  type UrlCheckDeps,
  type UrlCheckOptions,
  underPageLimit,
} from "../../src/agent/url-checks.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { silentLogger } from "../../src/logging/index.js";
import { RobotsRules, type RobotsRulesInit } from "../../src/robots/robots-rules.js";
import type { CrawlLogInput } from "../../src/storage/index.js";
import { type FrontierEnv, mustTake, openFrontierEnv, sharedFingerprinter } from "../frontier/helpers.js";
import { ManualClock } from "../support/manual-clock.js";
import { recordingLogger } from "../support/recording-logger.js";

/**
 * Each check a URL taken from its host's queue passes before its request, on a real frontier (LevelDB
 * in a temp dir), real stats and rules; what the crawler around them would do is recorded.
 */

const HOST = "a.test";
const URL = `http://${HOST}/page`;
const OPTIONS: UrlCheckOptions = { maxPagesPerHost: 3, maxRobotsAttempts: 2 };
const MATCHING = { userAgent: "ubicrawl", minCrawlDelayMs: 0, maxCrawlDelayMs: 3_600_000 };

let env: FrontierEnv;
let clock: ManualClock;
let runtimes: HostRuntimes;
let stats: CrawlStats;
/** What the checks told the crawler around them. */
let told: {
  resolved: string[];
  saved: RobotsRules[];
  paced: number[];
  sitemapsOf: string[];
  log: CrawlLogInput[];
};

beforeEach(async () => {
  env = await openFrontierEnv();
  clock = new ManualClock();
  runtimes = new HostRuntimes();
  stats = new CrawlStats(clock);
  told = { resolved: [], saved: [], paced: [], sitemapsOf: [], log: [] };
});

afterEach(async () => {
  await env.dispose();
});

/** Rules for `URL`'s origin received now (fresh), or as `init` says. */
function rules(init: Partial<RobotsRulesInit> = {}): RobotsRules {
  const now = clock.now();
  return new RobotsRules(
    {
      origin: `http://${HOST}`,
      status: "parsed",
      text: "",
      fetchedAtMs: now,
      expiresAtMs: now + 86_400_000,
      ...init,
    },
    MATCHING,
  );
}

/** The checks' deps on the real frontier, with what a test overrides. */
function depsWith(overrides: Partial<UrlCheckDeps> = {}): UrlCheckDeps {
  return {
    frontier: env.frontier,
    stats,
    clock,
    logger: silentLogger,
    mustYield: () => false,
    mayFetch: () => true,
    blacklisted: () => false,
    resolve: async (hostname) => {
      told.resolved.push(hostname);
      return "127.0.0.1";
    },
    robots: async () => rules(),
    saveRobots: (saved) => told.saved.push(saved),
    sitemaps: { queueListed: (host) => told.sitemapsOf.push(host) },
    crawlDelayBound: new CrawlDelayBound(
      { maxCrawlDelayMs: 30_000, policy: "skip" },
      { logger: silentLogger },
    ),
    paced: (_state, _rules, startedAtMs) => told.paced.push(startedAtMs),
    log: (line) => told.log.push(line),
    ...overrides,
  };
}

/** Queues `url` and takes it, as a visit does. */
async function taken(url = URL, traits: { revisit?: boolean } = {}): Promise<TakenUrl> {
  env.frontier.add(url, 0, HOST, traits.revisit ? { revisit: true } : {});
  const entry = await mustTake(env.frontier, HOST);
  return {
    host: HOST,
    entry,
    state: runtimes.of(HOST),
    unsynced: new UnsyncedPages(4),
    signal: new AbortController().signal,
  };
}

describe("still this agent's to fetch", () => {
  it("puts the URL back and ends the visit when paused or no longer allowed to fetch the host", async () => {
    const url = await taken();
    expect(stillMayFetch(url, depsWith({ mustYield: () => true }))).toEqual({
      kind: "put-back",
      outcome: { kind: "yielded" },
    });
    expect(stillMayFetch(url, depsWith({ mayFetch: () => false }))).toEqual({
      kind: "put-back",
      outcome: { kind: "yielded" },
    });
    expect(stillMayFetch(url, depsWith())).toBeUndefined();
  });
});

describe("not blacklisted", () => {
  it("keeps a blacklisted host's URL aside", async () => {
    const url = await taken();
    expect(notBlacklisted(url, depsWith({ blacklisted: (host) => host === HOST }))).toEqual({
      kind: "set-aside",
    });
    expect(notBlacklisted(url, depsWith())).toBeUndefined();
  });
});

describe("not fetched before", () => {
  it("drops a URL done already that came back to its host's queue (handed away, then returned)", async () => {
    const first = await taken();
    env.frontier.complete(HOST, first.entry, { done: true, counted: true });
    await env.frontier.commit();
    env.frontier.markSentAway((await sharedFingerprinter()).fingerprint(URL));
    const again = await taken();
    expect(env.frontier.needsFetchedCheck(HOST)).toBe(true);
    expect(await notFetchedBefore(again, depsWith())).toEqual({ kind: "drop", reason: "fetched-before" });
  });

  it("passes a URL never done, and does not read the done set when no copy can be queued", async () => {
    const url = await taken();
    expect(env.frontier.needsFetchedCheck(HOST)).toBe(false);
    expect(await notFetchedBefore(url, depsWith())).toBeUndefined();
  });

  it("lets a revisit give way to a newer plan of its page, and passes one with none", async () => {
    const url = await taken(URL, { revisit: true });
    const planned = {
      history: async () => ({ nextAtMs: clock.now() + 1000 }),
    } as unknown as UrlCheckDeps["revisits"];
    const unplanned = {
      history: async () => ({ nextAtMs: undefined }),
    } as unknown as UrlCheckDeps["revisits"];
    expect(await notFetchedBefore(url, depsWith({ revisits: planned }))).toEqual({ kind: "superseded" });
    expect(await notFetchedBefore(url, depsWith({ revisits: unplanned }))).toBeUndefined();
  });
});

describe("host not abandoned", () => {
  it("drops the URLs of a host given up", async () => {
    const url = await taken();
    expect(hostNotAbandoned(url, depsWith())).toBeUndefined();
    env.frontier.record(HOST).abandoned = "robots-unavailable";
    expect(hostNotAbandoned(url, depsWith())).toEqual({ kind: "drop", reason: "abandoned" });
  });
});

describe("under the host's page limit", () => {
  it("drops a URL past the limit, but never a revisit (counted at its first fetch)", async () => {
    const url = await taken();
    expect(await underPageLimit(url, depsWith(), OPTIONS)).toBeUndefined();
    env.frontier.record(HOST).fetched = OPTIONS.maxPagesPerHost;
    expect(await underPageLimit(url, depsWith(), OPTIONS)).toEqual({ kind: "drop", reason: "page-limit" });
    const revisit = { ...url, entry: { ...url.entry, revisit: true as const } };
    expect(await underPageLimit(revisit, depsWith(), OPTIONS)).toBeUndefined();
  });
});

describe("the host's address known", () => {
  it("asks the resolver for each URL; a host whose address changed moves there, said and counted", async () => {
    const url = await taken();
    const addresses = ["127.0.0.1", "127.0.0.1", "127.0.0.2"];
    const { logger, records } = await recordingLogger();
    const deps = depsWith({
      logger,
      resolve: async (hostname) => {
        told.resolved.push(hostname);
        return addresses.shift() as string;
      },
    });
    expect(await addressKnown(url, deps)).toBeUndefined();
    expect(await addressKnown(url, deps)).toBeUndefined();
    expect(url.state.ip).toBe("127.0.0.1");
    expect(stats.addressChangesThisRun).toBe(0);
    expect(await addressKnown(url, deps)).toBeUndefined();
    expect(told.resolved).toEqual([HOST, HOST, HOST]);
    expect(url.state.ip).toBe("127.0.0.2");
    expect(stats.addressChangesThisRun).toBe(1);
    expect(records.filter((r) => r.event === "host-address-changed")).toMatchObject([
      { level: "info", host: HOST, from: "127.0.0.1", to: "127.0.0.2" },
    ]);
  });

  it("fails the URLs of a host with no address, asking once and counting the host once", async () => {
    const url = await taken();
    let asked = 0;
    const deps = depsWith({
      resolve: async () => {
        asked++;
        throw new UbiError(ErrorCode.DnsNotFound, `${HOST}: no such name`);
      },
    });
    expect(await addressKnown(url, deps)).toEqual({ kind: "fail", code: ErrorCode.DnsNotFound });
    expect(await addressKnown(url, deps)).toEqual({ kind: "fail", code: ErrorCode.DnsNotFound });
    expect(asked).toBe(1);
    expect(stats.unresolvedHostsThisRun).toBe(1);
  });

  it("throws when stopped while resolving, deciding nothing", async () => {
    const url = await taken();
    const controller = new AbortController();
    const deps = depsWith({
      resolve: async () => {
        controller.abort();
        throw new Error("aborted");
      },
    });
    await expect(addressKnown({ ...url, signal: controller.signal }, deps)).rejects.toThrow("aborted");
    expect(url.state.dnsError).toBeUndefined();
  });
});

describe("the origin's TLS usable", () => {
  it("fails the URLs of an origin whose handshake failed this run, not the host's other origins", async () => {
    const url = await taken(`https://${HOST}/page`);
    expect(originTlsUsable(url)).toBeUndefined();
    url.state.tlsFailed = new Set([`https://${HOST}`]);
    expect(originTlsUsable(url)).toEqual({ kind: "fail", code: ErrorCode.TlsFailed });
    expect(originTlsUsable({ ...url, entry: { ...url.entry, url: `http://${HOST}/page` } })).toBeUndefined();
  });
});

describe("robots.txt answered", () => {
  it("counts, keeps and paces a fresh answer and queues its sitemaps; a cached one is only read", async () => {
    const url = await taken();
    const deps = depsWith();
    const fresh = await robotsAnswered(url, deps, OPTIONS);
    expect(fresh).toBeInstanceOf(RobotsRules);
    expect(told.saved).toHaveLength(1);
    expect(told.paced).toEqual([clock.now()]);
    expect(told.sitemapsOf).toEqual([HOST]);
    expect(stats.robotsOutcomes.get("parsed")).toBe(1);
    const cached = rules({ fetchedAtMs: clock.now() - 1 });
    expect(await robotsAnswered(url, depsWith({ robots: async () => cached }), OPTIONS)).toBe(cached);
    expect(told.saved).toHaveLength(1);
  });

  it("parks the host until robots.txt may be asked again, then gives the host up after the last attempt", async () => {
    const url = await taken();
    const retryAtMs = clock.now() + 5_000;
    const unavailable = depsWith({ robots: async () => rules({ status: "unavailable", retryAtMs }) });
    expect(await robotsAnswered(url, unavailable, OPTIONS)).toEqual({
      kind: "put-back",
      outcome: { kind: "parked", untilMs: retryAtMs, reason: "robots" },
    });
    expect(env.frontier.record(HOST).abandoned).toBeUndefined();
    expect(await robotsAnswered(url, unavailable, OPTIONS)).toEqual({
      kind: "put-back",
      outcome: { kind: "yielded" },
    });
    expect(env.frontier.record(HOST).abandoned).toBe("robots-unavailable");
    expect(stats.errors.get("robots_unavailable")).toBe(1);
  });

  it("puts the URL back at a pause while robots.txt is awaited, and takes the answer when it comes", async () => {
    const url = await taken();
    let answer: (rules: RobotsRules) => void = () => {};
    const pause = new AbortController();
    const askedAtMs = clock.now();
    const deps = depsWith({
      robots: () => new Promise((resolve) => (answer = resolve)),
      pausedSignal: () => pause.signal,
    });
    const checked = robotsAnswered(url, deps, OPTIONS);
    pause.abort();
    expect(await checked).toEqual({ kind: "put-back", outcome: { kind: "yielded" } });
    expect(told.saved).toHaveLength(0);
    // The robots.txt request ends later (it waited for its address): counted, kept, pacing the host.
    clock.advance(300);
    answer(rules());
    await new Promise((resolve) => setImmediate(resolve));
    expect(told.saved).toHaveLength(1);
    expect(told.paced).toEqual([askedAtMs]);
    expect(stats.robotsOutcomes.get("parsed")).toBe(1);
    // Paused already: not even asked to wait.
    expect(await robotsAnswered(url, depsWith({ pausedSignal: () => pause.signal }), OPTIONS)).toEqual({
      kind: "put-back",
      outcome: { kind: "yielded" },
    });
    // Not paused: the answer as before.
    const running = depsWith({ pausedSignal: () => new AbortController().signal });
    expect(await robotsAnswered(url, running, OPTIONS)).toBeInstanceOf(RobotsRules);
  });

  it("takes rules given at once (cached and fresh) without a wait, and puts the URL back if paused already", async () => {
    const url = await taken();
    const cached = rules({ fetchedAtMs: clock.now() - 1 });
    expect(await robotsAnswered(url, depsWith({ robots: () => cached }), OPTIONS)).toBe(cached);
    const running = depsWith({ robots: () => cached, pausedSignal: () => new AbortController().signal });
    expect(await robotsAnswered(url, running, OPTIONS)).toBe(cached);
    const pause = new AbortController();
    pause.abort();
    const paused = depsWith({ robots: () => cached, pausedSignal: () => pause.signal });
    expect(await robotsAnswered(url, paused, OPTIONS)).toEqual({
      kind: "put-back",
      outcome: { kind: "yielded" },
    });
    expect(told.saved).toHaveLength(0);
  });

  it("does not count a cached failure as an attempt", async () => {
    const url = await taken();
    const cached = depsWith({
      robots: async () =>
        rules({ status: "unavailable", fetchedAtMs: clock.now() - 1, retryAtMs: clock.now() + 10 }),
    });
    for (let i = 0; i < 3; i++)
      expect((await robotsAnswered(url, cached, OPTIONS)) as unknown).toMatchObject({ kind: "put-back" });
    expect(url.state.robotsAttempts).toBe(0);
    expect(env.frontier.record(HOST).abandoned).toBeUndefined();
  });

  it("fails the URL on a TLS failure, marking its origin, and on an address --allow-net refuses", async () => {
    const url = await taken(`https://${HOST}/page`);
    const tls = depsWith({
      robots: async () =>
        new RobotsRules(
          {
            origin: `https://${HOST}`,
            status: "unavailable",
            fetchedAtMs: clock.now(),
            expiresAtMs: clock.now() + 60_000,
            error: ErrorCode.TlsFailed,
            reason: "self-signed",
          },
          MATCHING,
        ),
    });
    expect(await robotsAnswered(url, tls, OPTIONS)).toEqual({
      kind: "fail",
      code: ErrorCode.TlsFailed,
      reason: "self-signed",
    });
    expect(url.state.tlsFailed?.has(`https://${HOST}`)).toBe(true);
    const forbidden = depsWith({
      robots: async () => rules({ status: "unavailable", error: ErrorCode.AddressForbidden }),
    });
    const other = await taken(`http://${HOST}/other`);
    expect(await robotsAnswered(other, forbidden, OPTIONS)).toEqual({
      kind: "fail",
      code: ErrorCode.AddressForbidden,
    });
    expect(other.state.dnsError).toBe(ErrorCode.AddressForbidden);
  });
});

describe("the Crawl-delay within the operator's bound", () => {
  it("drops the URLs of a host asking for longer under the skip policy, saying so in the crawl log", async () => {
    const url = await taken();
    const slow = rules({ text: "User-agent: *\nCrawl-delay: 3500\n" });
    expect(crawlDelayWithinBound(url, slow, depsWith())).toEqual({
      kind: "drop",
      reason: "crawl-delay-too-long",
    });
    expect(told.log).toHaveLength(1);
    expect(told.log[0]?.url).toBe(URL);
    expect(
      crawlDelayWithinBound(url, rules({ text: "User-agent: *\nCrawl-delay: 5\n" }), depsWith()),
    ).toBeUndefined();
  });
});

describe("allowed by robots.txt", () => {
  it("drops a URL robots.txt disallows", async () => {
    const url = await taken();
    expect(allowedByRobots(url, rules({ text: "User-agent: *\nDisallow: /page\n" }))).toEqual({
      kind: "drop",
      reason: "robots",
    });
    expect(allowedByRobots(url, rules({ text: "User-agent: *\nDisallow: /other\n" }))).toBeUndefined();
  });
});

describe("the checks in order", () => {
  it("stop at the first that decides: a blacklisted host's URL is set aside without asking its address or robots.txt", async () => {
    const url = await taken();
    let robotsAsked = 0;
    const deps = depsWith({
      blacklisted: () => true,
      robots: async () => {
        robotsAsked++;
        return rules();
      },
    });
    expect(await checkTakenUrl(url, deps, OPTIONS)).toEqual({ kind: "set-aside" });
    expect(told.resolved).toEqual([]);
    expect(robotsAsked).toBe(0);
  });

  it("let a URL that passes them all be fetched under its origin's rules", async () => {
    const url = await taken();
    const verdict = await checkTakenUrl(url, depsWith(), OPTIONS);
    expect(verdict.kind).toBe("fetch");
    expect(verdict.kind === "fetch" && verdict.rules.isAllowed(URL)).toBe(true);
  });
});
