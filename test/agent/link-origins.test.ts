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

it("gives the links found on a host's pages, fetched here or waiting, once, and forgets those handed on", () => {
  const origins = new LinkOrigins();
  origins.note("a.test", link("http://b.test/1"));
  origins.note("a.test", link("http://b.test/2"));
  origins.note("a.test", link("http://c.test/1"));
  origins.note("d.test", link("http://b.test/3"));
  origins.note("d.test", link("http://b.test/1"));
  expect(origins.size).toBe(4);
  // Handed to its host's new owner with the queue, or dropped: forgotten.
  origins.settled("http://b.test/2", false);
  origins.settled("http://never-noted.test/", true);
  // Fetched here: kept, marked, the only record of the link once a.test is done elsewhere.
  origins.settled("http://c.test/1", true);
  expect(origins.take("a.test")).toEqual([
    link("http://b.test/1"),
    { ...link("http://c.test/1"), done: true },
  ]);
  expect(origins.take("a.test")).toEqual([]);
  expect(origins.size).toBe(1);
  origins.settled("http://b.test/3", false);
  expect(origins.take("d.test")).toEqual([]);
  expect(origins.size).toBe(0);
});

it("keeps at most its bound: forgets the oldest fetched first, then counts new links only, and says so once", () => {
  const full: number[] = [];
  const origins = new LinkOrigins(3, (maxLinks) => full.push(maxLinks));
  for (const i of [1, 2, 3]) origins.note("a.test", link(`http://b.test/${i}`));
  origins.settled("http://b.test/2", true);
  origins.settled("http://b.test/1", true);
  // The oldest fetched (2, then 1) make room.
  origins.note("a.test", link("http://b.test/4"));
  origins.note("a.test", link("http://b.test/5"));
  expect(full).toEqual([3]);
  // None fetched left: counted, not kept.
  origins.note("a.test", link("http://b.test/6"));
  expect(origins.size).toBe(3);
  expect(origins.beyondBound).toBe(3);
  expect(full).toEqual([3]);
  origins.settled("http://b.test/3", false);
  origins.note("a.test", link("http://b.test/7"));
  expect(origins.take("a.test").map((found) => found.url)).toEqual([
    "http://b.test/4",
    "http://b.test/5",
    "http://b.test/7",
  ]);
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

it("notes the links given to a keeper by it, fetched here or waiting, and gives them once it is gone", () => {
  const origins = new LinkOrigins(3);
  origins.note("a.test", link("http://b.test/1"));
  origins.note("a.test", link("http://b.test/2"));
  origins.settled("http://b.test/2", true);
  origins.keep("k", origins.take("a.test"));
  expect(origins.size).toBe(2);
  // Still counted against the bound; the one fetched here is forgotten first.
  origins.note("c.test", link("http://b.test/3"));
  origins.note("c.test", link("http://b.test/4"));
  origins.note("c.test", link("http://b.test/5"));
  expect(origins.beyondBound).toBe(2);
  origins.settled("http://b.test/1", true);
  expect(origins.take("a.test")).toEqual([]);
  expect(origins.takeKeptBy("k")).toEqual([{ ...link("http://b.test/1"), done: true }]);
  expect(origins.takeKeptBy("k")).toEqual([]);
  expect(origins.size).toBe(2);
});
