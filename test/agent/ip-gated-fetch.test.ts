import { describe, expect, it } from "vitest";
import { ipGatedFetch, type PauseWatch } from "../../src/agent/ip-gated-fetch.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import type { FetchResult } from "../../src/fetching/index.js";
import { IpGate, type IpLimiter, ipRelease } from "../../src/frontier/index.js";
import { type Deferred, deferred, flush } from "../frontier/helpers.js";
import { ManualClock } from "../support/manual-clock.js";

/** A fetcher whose requests stay open until the test ends them, and the addresses' table. */
function setUp(maxPerIp: number, pause?: PauseWatch) {
  const open = new Map<string, Deferred<FetchResult>>();
  const started: string[] = [];
  const addresses: Record<string, string> = {
    "a.test": "127.0.0.5",
    "b.test": "127.0.0.5",
    "c.test": "127.0.0.6",
  };
  const fetch = ipGatedFetch(
    {
      fetch: (url) => {
        started.push(url);
        const request = deferred<FetchResult>();
        open.set(url, request);
        return request.promise;
      },
    },
    async (hostname) => {
      const ip = addresses[hostname];
      if (ip === undefined) throw new Error(`${hostname} does not resolve`);
      return ip;
    },
    new IpGate(maxPerIp),
    pause,
  );
  const end = async (url: string) => {
    open.get(url)?.resolve({ url } as FetchResult);
    await flush();
  };
  return { fetch, started, end };
}

describe("ipGatedFetch (robots.txt requests under --max-per-ip)", () => {
  it("holds a second request to the same address until the first ends; another address goes at once", async () => {
    const { fetch, started, end } = setUp(1);
    const first = fetch.fetch("http://a.test/robots.txt");
    const second = fetch.fetch("http://b.test/robots.txt");
    const other = fetch.fetch("http://c.test/robots.txt");
    await flush();
    expect(started).toEqual(["http://a.test/robots.txt", "http://c.test/robots.txt"]);
    await end("http://a.test/robots.txt");
    expect(started).toContain("http://b.test/robots.txt");
    await end("http://b.test/robots.txt");
    await end("http://c.test/robots.txt");
    await expect(Promise.all([first, second, other])).resolves.toHaveLength(3);
  });

  it("sends no request while the agent is paused: a wait for the slot ends at the pause, and goes on at the resume", async () => {
    const clock = new ManualClock();
    let pause = new AbortController();
    pause.abort();
    const { fetch, started, end } = setUp(1, { pausedSignal: () => pause.signal, clock });
    // Paused: nothing is sent, though the slot is free.
    const held = fetch.fetch("http://c.test/robots.txt");
    await flush();
    expect(started).toEqual([]);
    pause = new AbortController();
    clock.advance(100);
    await flush();
    expect(started).toEqual(["http://c.test/robots.txt"]);
    // A request waiting for its address's slot when the pause comes is not sent when the slot frees.
    const first = fetch.fetch("http://a.test/robots.txt");
    const waiting = fetch.fetch("http://b.test/robots.txt");
    await flush();
    pause.abort();
    await end("http://a.test/robots.txt");
    clock.advance(500);
    await flush();
    expect(started).not.toContain("http://b.test/robots.txt");
    pause = new AbortController();
    clock.advance(100);
    await flush();
    expect(started).toContain("http://b.test/robots.txt");
    await end("http://b.test/robots.txt");
    await end("http://c.test/robots.txt");
    await expect(Promise.all([held, first, waiting])).resolves.toHaveLength(3);
  });

  it("fails a request held by a pause once the agent stops, instead of waiting for a resume that never comes", async () => {
    const clock = new ManualClock();
    const pause = new AbortController();
    pause.abort();
    const stop = new AbortController();
    const { fetch, started } = setUp(1, {
      pausedSignal: () => pause.signal,
      stoppedSignal: () => stop.signal,
      clock,
    });
    const held = fetch.fetch("http://c.test/robots.txt");
    const outcome = held.then(
      () => "sent",
      (error: unknown) => error,
    );
    clock.advance(500);
    await flush();
    stop.abort(new UbiError(ErrorCode.Stopped, "scheduler stopped"));
    await flush();
    expect(await outcome).toMatchObject({ code: ErrorCode.Stopped });
    expect(started).toEqual([]);
    // Nothing polls for the resume any more.
    expect(clock.pending).toBe(0);
  });

  it("frees the slot when the request fails, and fetches a name that does not resolve without a slot", async () => {
    const { fetch, started } = setUp(1);
    const failing = ipGatedFetch(
      { fetch: () => Promise.reject(new Error("reset")) },
      async () => "127.0.0.5",
      new IpGate(1),
    );
    await expect(failing.fetch("http://a.test/robots.txt")).rejects.toThrow("reset");
    await expect(failing.fetch("http://b.test/robots.txt")).rejects.toThrow("reset");
    void fetch.fetch("http://gone.test/robots.txt");
    await flush();
    expect(started).toEqual(["http://gone.test/robots.txt"]);
  });

  it("resolves each request anew and sends it to the address it was counted at", async () => {
    const addresses = ["127.0.0.5", "127.0.0.6"];
    const sentTo: (string | undefined)[] = [];
    const gate = new IpGate(1);
    const fetch = ipGatedFetch(
      {
        fetch: async (url, options) => {
          sentTo.push(options?.ip);
          return { url } as FetchResult;
        },
      },
      async () => addresses.shift() as string,
      gate,
    );
    await fetch.fetch("http://a.test/robots.txt");
    await fetch.fetch("http://a.test/robots.txt");
    expect(sentTo).toEqual(["127.0.0.5", "127.0.0.6"]);
  });

  it("gives up waiting for a slot when its signal aborts", async () => {
    const { fetch, started } = setUp(1);
    void fetch.fetch("http://a.test/robots.txt");
    const abort = new AbortController();
    const waiting = fetch.fetch("http://b.test/robots.txt", { signal: abort.signal });
    abort.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
    expect(started).toEqual(["http://a.test/robots.txt"]);
  });
});

describe("ipGatedFetch: a request whose slot lapsed on its way", () => {
  it("gives the slot back and asks for another, the request sent under the new one", async () => {
    const grants: boolean[] = [];
    let acquired = 0;
    let released = 0;
    const limiter: Pick<IpLimiter, "acquire"> = {
      acquire: async () => {
        const lapsed = acquired++ === 0;
        return ipRelease(
          () => released++,
          () => {
            grants.push(!lapsed);
            return !lapsed;
          },
        );
      },
    };
    const sentUrls: string[] = [];
    const fetch = ipGatedFetch(
      {
        fetch: async (url, options) => {
          if (options?.onSent?.() === false) throw new UbiError(ErrorCode.StartLapsed, "lapsed");
          sentUrls.push(url);
          return { url } as FetchResult;
        },
      },
      async () => "127.0.0.5",
      limiter as IpLimiter,
    );
    await expect(fetch.fetch("http://a.test/robots.txt")).resolves.toEqual({
      url: "http://a.test/robots.txt",
    });
    expect(grants).toEqual([false, true]);
    expect([acquired, released]).toEqual([2, 2]);
    expect(sentUrls).toEqual(["http://a.test/robots.txt"]);
  });
});
