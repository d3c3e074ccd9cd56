import { describe, expect, it } from "vitest";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { CROSS_OVER_CHECK_MS, CrossOver } from "../../src/agent/cross-over.js";
import { type LinkMode, LinkRouter, type UrlExchange } from "../../src/agent/link-router.js";
import type { Frontier } from "../../src/frontier/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * Cho and Garcia-Molina's three modes at the fork of a link's path: the link router of an agent "me"
 * that owns the hosts named `mine*`, the others being "you"'s. The frontier and the exchange record what
 * reaches them (the real ones need a store and peers; what they do with a URL is tested elsewhere).
 */
function routerOf(mode: LinkMode, crossOver?: CrossOver, replicated?: ReadonlySet<string>) {
  const clock = new ManualClock();
  const stats = new CrawlStats(clock);
  const queued: string[] = [];
  const sent: string[] = [];
  const frontier = {
    add: (url: string) => {
      queued.push(url);
      return true;
    },
  } as unknown as Frontier;
  const exchange: UrlExchange = {
    send: (owner, url) => sent.push(`${owner} ${url}`),
    offer: (owner, url) => sent.push(`${owner} ${url}`),
  };
  const router = new LinkRouter(
    { maxDepth: 5, scopes: [], mode, ...(replicated ? { replicated } : {}) },
    {
      selfId: "me",
      ownership: () => ({ ownerOfUrl: (_url, host) => (host.startsWith("mine") ? "me" : "you") }),
      frontier,
      exchange,
      stats,
      ...(crossOver ? { crossOver } : {}),
    },
  );
  return { router, queued, sent, stats };
}

describe("link modes", () => {
  it("exchange sends a link to another agent's host to its owner", () => {
    const { router, queued, sent } = routerOf("exchange");
    router.route("http://mine.test/a", 0, "mine.test");
    router.route("http://other.test/", 0, "mine.test");
    expect(queued).toEqual(["http://mine.test/a"]);
    expect(sent).toEqual(["you http://other.test/"]);
  });

  it("firewall drops links to other agents' hosts, counted, but sends seeds and given URLs to their owners", () => {
    const { router, queued, sent, stats } = routerOf("firewall");
    router.route("http://mine.test/a", 0, "mine.test");
    router.route("http://other.test/", 0, "mine.test");
    router.route("http://other.test/b", 0, "mine2.test");
    router.route("http://other.test/seed", 0, undefined);
    router.routeAt("http://other.test/handed", 2, "other.test");
    expect(queued).toEqual(["http://mine.test/a"]);
    expect(sent).toEqual(["you http://other.test/seed", "you http://other.test/handed"]);
    expect(stats.dropped.get("firewall")).toBe(2);
  });

  it("cross holds links to other agents' hosts and queues them once its own work is out", () => {
    const clock = new ManualClock();
    let outOfWork = false;
    let rounds = 0;
    const adopted: string[] = [];
    const crossOver = new CrossOver({
      clock,
      outOfWork: () => outOfWork,
      queue: (url, depth) => adopted.push(`${url} ${depth}`),
      adopted: () => rounds++,
    });
    const { router, queued, sent, stats } = routerOf("cross", crossOver);
    router.route("http://other.test/", 3, "mine.test");
    router.route("http://other.test/x", 4, "other.test");
    // Found again from elsewhere at a shallower depth: held once, at that depth.
    router.route("http://other.test/x", 0, "mine.test");
    router.route("http://mine.test/a", 0, "mine.test");
    expect(queued).toEqual(["http://mine.test/a"]);
    expect(sent).toEqual([]);
    expect(crossOver.heldLinks).toBe(2);

    crossOver.start();
    clock.advance(CROSS_OVER_CHECK_MS * 3);
    expect(adopted).toEqual([]);
    expect(crossOver.isAdopted("other.test")).toBe(false);

    outOfWork = true;
    clock.advance(CROSS_OVER_CHECK_MS);
    expect(adopted).toEqual(["http://other.test/ 0", "http://other.test/x 0"]);
    expect(rounds).toBe(1);
    expect(crossOver.heldLinks).toBe(0);
    expect(crossOver.isAdopted("other.test")).toBe(true);
    // Crossed into: its links are queued here at once; links to hosts not crossed into are held.
    router.route("http://other.test/y", 0, "other.test");
    router.route("http://third.test/", 0, "other.test");
    expect(queued).toEqual(["http://mine.test/a", "http://other.test/y"]);
    expect(crossOver.heldLinks).toBe(1);
    expect(stats.dropped.get("firewall")).toBeUndefined();

    crossOver.stop();
    clock.advance(CROSS_OVER_CHECK_MS * 10);
    expect(crossOver.heldLinks).toBe(1);
    expect(clock.pending).toBe(0);
  });

  it("never sends a replicated URL to its owner, found on a page or given as a seed, but queues its own", () => {
    const replicated = new Set(["http://other.test/", "http://mine.test/top"]);
    const { router, queued, sent, stats } = routerOf("exchange", undefined, replicated);
    router.route("http://other.test/", 0, "mine.test");
    router.route("http://other.test/", 0, undefined);
    router.route("http://other.test/not-replicated", 0, "mine.test");
    router.route("http://mine.test/top", 0, "mine.test");
    // A URL handed over by a peer or sent again after a failure still goes: its owner asked for it.
    router.routeAt("http://other.test/", 0, "other.test");
    expect(sent).toEqual(["you http://other.test/not-replicated", "you http://other.test/"]);
    expect(queued).toEqual(["http://mine.test/top"]);
    expect(stats.dropped.get("replicated")).toBe(2);
  });

  it("cross drops links past its bound, counted", () => {
    const crossOver = new CrossOver(
      { clock: new ManualClock(), outOfWork: () => false, queue: () => {}, adopted: () => {} },
      2,
    );
    const { router, stats } = routerOf("cross", crossOver);
    for (const path of ["a", "b", "c", "d"]) router.route(`http://other.test/${path}`, 0, "mine.test");
    expect(crossOver.heldLinks).toBe(2);
    expect(stats.dropped.get("cross-over-full")).toBe(2);
  });

  it("widens the cluster's answers to the hosts crossed into, and only to those", async () => {
    let outOfWork = true;
    const crossOver = new CrossOver({
      clock: new ManualClock(),
      outOfWork: () => outOfWork,
      queue: () => {},
      adopted: () => {},
    });
    const rights = crossOver.widen({
      owns: (host) => host.startsWith("mine"),
      admit: () => ({ untilMs: 99, reason: "hand-over" }),
      mayFetch: () => false,
    });
    expect(rights.owns("other.test")).toBe(false);
    expect(rights.mayFetch("other.test")).toBe(false);
    crossOver.hold("http://other.test/", 0, "other.test", {});
    expect(crossOver.adoptIfOutOfWork()).toBe(true);
    outOfWork = false;
    expect(crossOver.adoptIfOutOfWork()).toBe(false);
    expect(rights.owns("other.test")).toBe(true);
    expect(rights.mayFetch("other.test")).toBe(true);
    expect(await rights.admit("other.test")).toBe(0);
    // Its own hosts keep the cluster's answers.
    expect(rights.owns("mine.test")).toBe(true);
    expect(rights.mayFetch("mine.test")).toBe(false);
    expect(await rights.admit("mine.test")).toEqual({ untilMs: 99, reason: "hand-over" });
    expect(rights.owns("third.test")).toBe(false);
  });
});
