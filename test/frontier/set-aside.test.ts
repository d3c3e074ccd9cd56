import { afterEach, describe, expect, it } from "vitest";
import type { QueuedUrl } from "../../src/storage/index.js";
import {
  type FrontierEnv,
  mustTake,
  openFrontierEnv,
  sharedFingerprinter,
  takeAll,
  urlsOf,
} from "./helpers.js";

describe("Frontier: URLs of a blacklisted host kept aside", () => {
  let env: FrontierEnv | undefined;

  afterEach(async () => {
    await env?.dispose();
    env = undefined;
  });

  it("keeps dropped URLs aside durably up to the cap, counts those beyond, and gives them back once", async () => {
    env = await openFrontierEnv({ maxAsidePerHost: 3 });
    const host = "a.test";
    const urls = urlsOf(host, 0, 5);
    for (const [i, url] of urls.entries()) env.frontier.add(url, i, host, i === 1 ? { attempts: 2 } : {});
    await env.frontier.commit();
    const outcomes = [];
    for (let i = 0; i < 5; i++)
      outcomes.push(env.frontier.setAside(host, await mustTake(env.frontier, host)));
    expect(outcomes).toEqual(["kept", "kept", "kept", "beyond-cap", "beyond-cap"]);
    await env.frontier.commit();
    expect(env.frontier.waitingUrls).toBe(0);
    expect(env.frontier.inFlightUrls).toBe(0);
    expect(env.frontier.isEmpty).toBe(true);

    // A crash loses none of it: the counts and the entries come back with the state.
    await env.reopen({ maxAsidePerHost: 3 });
    expect(env.frontier.asideHosts()).toEqual([host]);
    expect(env.frontier.asideOf(host)).toEqual({ kept: 3, beyond: 2 });
    // Seen still: a link to one of them is not queued again by add.
    expect(env.frontier.add(urls[0] as string, 0, host)).toBe(false);

    const placed: QueuedUrl[] = [];
    const restored = await env.frontier.restoreAside(host, (entry) => {
      placed.push(entry);
      env?.frontier.requeue(entry.url, entry.depth, host, entry);
    });
    expect(restored).toEqual({ placed: 3, doneMeanwhile: 0, beyondCap: 2 });
    // Depth and traits kept.
    expect(placed.map((entry) => [entry.url, entry.depth, entry.attempts])).toEqual([
      [urls[0], 0, undefined],
      [urls[1], 1, 2],
      [urls[2], 2, undefined],
    ]);
    await env.frontier.commit();
    expect(env.frontier.asideHosts()).toEqual([]);
    expect(await env.frontier.restoreAside(host, () => {})).toBeUndefined();

    // Queued again, durably, and the aside entries gone in the same batch.
    await env.reopen({ maxAsidePerHost: 3 });
    expect(env.frontier.asideHosts()).toEqual([]);
    expect(await takeAll(env.frontier, host)).toEqual(urls.slice(0, 3));
  });

  it("does not give back a URL done meanwhile (a previous owner's hand-over): nothing is fetched twice", async () => {
    env = await openFrontierEnv();
    const host = "b.test";
    const [first, second] = urlsOf(host, 0, 2) as [string, string];
    env.frontier.add(first, 0, host);
    env.frontier.add(second, 0, host);
    env.frontier.setAside(host, await mustTake(env.frontier, host));
    env.frontier.setAside(host, await mustTake(env.frontier, host));
    // Another agent fetched the first meanwhile, and handed the host back with its done set.
    const fingerprint = (await sharedFingerprinter()).fingerprint(first);
    env.frontier.adopt(host, { done: [fingerprint], pagesFetched: 1 });
    const placed: string[] = [];
    const restored = await env.frontier.restoreAside(host, (entry) => placed.push(entry.url));
    expect(restored).toEqual({ placed: 1, doneMeanwhile: 1, beyondCap: 0 });
    expect(placed).toEqual([second]);
  });

  it("forces a URL seen before into its queue unless done, marking a queue that may hold it twice for the done check", async () => {
    env = await openFrontierEnv();
    const host = "c.test";
    const [fresh, seen, done] = urlsOf(host, 0, 3) as [string, string, string];
    env.frontier.add(seen, 0, host);
    env.frontier.add(done, 0, host);
    expect(await env.frontier.forceAdd(fresh, 0, host)).toBe("queued");
    // `seen` is waiting in the queue: forced, a second copy is queued, and the queue is checked.
    expect(await env.frontier.forceAdd(seen, 0, host)).toBe("queued-again");
    expect(env.frontier.needsFetchedCheck(host)).toBe(true);
    const taken = [];
    for (let entry = await env.frontier.take(host); entry; entry = await env.frontier.take(host)) {
      taken.push(entry.url);
      env.frontier.complete(host, entry, { done: true, counted: true });
    }
    await env.frontier.commit();
    expect(await env.frontier.forceAdd(done, 0, host)).toBe("done-before");
    expect(await env.frontier.forceAdd(seen, 0, host)).toBe("done-before");
    // The duplicate copy is there (the visitor's done check skips it: see host-visitor).
    expect(taken.sort()).toEqual([done, fresh, seen, seen].sort());
    expect(env.frontier.waitingUrls).toBe(0);
  });

  it("refuses a cap that is not a whole number", async () => {
    await expect(openFrontierEnv({ maxAsidePerHost: -1 })).rejects.toThrow(/maxAsidePerHost/);
  });
});
