import { expect, it } from "vitest";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { LinkOrigins } from "../../src/agent/link-origins.js";
import { LinkRouter } from "../../src/agent/link-router.js";
import type { Frontier } from "../../src/frontier/index.js";
import { ManualClock } from "../support/manual-clock.js";

/**
 * The links an agent queued for its own hosts from pages of other hosts, by the host they were found on:
 * kept until each leaves its queue, and given away when that host is handed over.
 */

const link = (url: string) => ({ url, depth: 0, host: new URL(url).host, traits: {} });

it("gives the links found on a host's pages that still wait, once, and forgets those settled", () => {
  const origins = new LinkOrigins();
  origins.note("a.test", link("http://b.test/1"));
  origins.note("a.test", link("http://b.test/2"));
  origins.note("a.test", link("http://c.test/1"));
  origins.note("d.test", link("http://b.test/3"));
  origins.note("d.test", link("http://b.test/1"));
  expect(origins.size).toBe(4);
  origins.settled("http://b.test/2");
  origins.settled("http://never-noted.test/");
  expect(origins.take("a.test").map((found) => found.url)).toEqual(["http://b.test/1", "http://c.test/1"]);
  expect(origins.take("a.test")).toEqual([]);
  expect(origins.size).toBe(1);
  origins.settled("http://b.test/3");
  expect(origins.take("d.test")).toEqual([]);
  expect(origins.size).toBe(0);
});

it("keeps at most its bound, counting the links beyond and saying so once", () => {
  const full: number[] = [];
  const origins = new LinkOrigins(2, (maxLinks) => full.push(maxLinks));
  for (const i of [1, 2, 3, 5]) origins.note("a.test", link(`http://b.test/${i}`));
  expect(origins.size).toBe(2);
  expect(origins.beyondBound).toBe(2);
  expect(full).toEqual([2]);
  origins.settled("http://b.test/1");
  origins.note("a.test", link("http://b.test/4"));
  expect(origins.take("a.test").map((found) => found.url)).toEqual(["http://b.test/2", "http://b.test/4"]);
});

it("notes the links queued here from another host's page, by that host, and no others", () => {
  // Agent "me" owns the hosts named mine*; "you" the others. A URL seen before is not queued again.
  const origins = new LinkOrigins();
  const seen = new Set<string>(["http://mine2.test/seen"]);
  const router = new LinkRouter(
    { maxDepth: 5, scopes: [], mode: "exchange" },
    {
      selfId: "me",
      ownership: () => ({ ownerOfUrl: (_url, host) => (host.startsWith("mine") ? "me" : "you") }),
      frontier: {
        add: (url: string) => !seen.has(url) && Boolean(seen.add(url)),
      } as unknown as Frontier,
      exchange: { send: () => {}, offer: () => {} },
      stats: new CrawlStats(new ManualClock()),
      origins,
    },
  );
  router.route("http://mine2.test/a", 0, "mine.test");
  router.route("http://mine2.test/seen", 0, "mine.test");
  router.route("http://mine.test/same-host", 0, "mine.test");
  router.route("http://other.test/", 0, "mine.test");
  router.route("http://mine2.test/seed", 0, undefined);
  router.routeAt("http://mine2.test/given", 0, "mine2.test");
  expect(origins.take("mine.test")).toEqual([
    { url: "http://mine2.test/a", depth: 0, host: "mine2.test", traits: {} },
  ]);
  expect(origins.size).toBe(0);
});

it("notes the links given to a keeper by it, until each settles, and gives those left once it is gone", () => {
  const origins = new LinkOrigins(3);
  origins.note("a.test", link("http://b.test/1"));
  origins.note("a.test", link("http://b.test/2"));
  origins.keep("k", origins.take("a.test"));
  expect(origins.size).toBe(2);
  // Still counted against the bound.
  origins.note("c.test", link("http://b.test/3"));
  origins.note("c.test", link("http://b.test/4"));
  expect(origins.beyondBound).toBe(1);
  origins.settled("http://b.test/1");
  expect(origins.take("a.test")).toEqual([]);
  expect(origins.takeKeptBy("k").map((found) => found.url)).toEqual(["http://b.test/2"]);
  expect(origins.takeKeptBy("k")).toEqual([]);
  expect(origins.size).toBe(1);
});

it("gives every link noted, found or kept, once, when this agent leaves", () => {
  const origins = new LinkOrigins();
  origins.note("a.test", link("http://b.test/1"));
  origins.note("c.test", link("http://b.test/2"));
  origins.keep("k", [link("http://b.test/3")]);
  expect(origins.takeAll().map((found) => found.url)).toEqual([
    "http://b.test/1",
    "http://b.test/2",
    "http://b.test/3",
  ]);
  expect(origins.size).toBe(0);
  expect(origins.takeAll()).toEqual([]);
  expect(origins.take("a.test")).toEqual([]);
});
