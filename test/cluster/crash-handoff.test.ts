import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import type { AgentOptions } from "../../src/agent/agent-options.js";
import { CrawlStats } from "../../src/agent/crawl-stats.js";
import { systemClock } from "../../src/clock.js";
import { ClusterNode, type ClusterOptions, UrlExchange } from "../../src/cluster/index.js";
import { resendUnacked } from "../../src/cluster/unacked-urls.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { Frontier } from "../../src/frontier/index.js";
import { Assignment, loadHasher64 } from "../../src/hashing/index.js";
import { GroupCommit, outboxOp, type StateOp, StateStore } from "../../src/storage/index.js";
import { INSECURE, type UrlBatch, type UrlBatchAck } from "../../src/transport/index.js";
import { hostKey, UrlFingerprinter } from "../../src/url/index.js";
import { inProcessAgentOptions, waitFor } from "../agent/harness.js";

/**
 * A URL handed to another agent lives, until that agent acknowledges it, only in the sender's durable
 * outbox: the page it was found on is recorded as fetched in the same batch. A SIGKILL (or any stop)
 * before the acknowledgement must not lose it: the restarted sender routes it again.
 */

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-handoff-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Agents and the web server the in-process cluster tests start; stopped after each test. */
const nodes: ClusterNode[] = [];
let server: Server | undefined;

afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe("a hand-off not acknowledged when its sender stops (in process: the store is flushed, not torn), two agents", () => {
  it("reaches its owner after the sender restarts, though the page that linked it is not fetched again", async () => {
    const requests: string[] = [];
    server = createServer((request, response) => {
      const host = (request.headers.host ?? "").split(":")[0] ?? "";
      requests.push(`${host}${request.url}`);
      if (request.url === "/robots.txt") {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": "text/html" });
      // The only link to the far page is on the home page of the near host.
      response.end(request.url === "/" ? `<a href="http://${far}:${port}/only">far</a>` : "<p>end</p>");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const assignment = await assignmentOfAB();
    const ownedBy = (id: string) => {
      for (let i = 0; ; i++) {
        const name = `h${i}.handoff.test`;
        if (assignment.ownerOf(`${name}:${port}`) === id) return name;
      }
    };
    const near = ownedBy("a");
    const far = ownedBy("b");
    const hostsFile = join(dir, "hosts");
    await writeFile(hostsFile, `127.0.0.1 ${near}\n127.0.0.1 ${far}\n`);

    const b = await ClusterNode.start(agentOptions("b", hostsFile, []), clusterOptions([]));
    nodes.push(b);
    // b takes the batch and never answers: the sender stops before any acknowledgement.
    const held: UrlBatch[] = [];
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const submitUrls = b.handlers.submitUrls;
    b.handlers.submitUrls = async (batch: UrlBatch): Promise<UrlBatchAck> => {
      held.push(batch);
      await released;
      throw new UbiError(ErrorCode.Overloaded, "held");
    };
    const seeds = [`http://${near}:${port}/`];
    let a = await ClusterNode.start(agentOptions("a", hostsFile, seeds), clusterOptions([b.address]));
    nodes.push(a);
    const farUrl = `http://${far}:${port}/only`;
    await waitFor(
      () => held.some((batch) => batch.urls.some((entry) => entry.url === farUrl)),
      "the hand-off",
    );
    await a.stop();
    nodes.splice(nodes.indexOf(a), 1);
    // b answers again, and treats a as dead before a comes back with the same id and data.
    b.handlers.submitUrls = submitUrls;
    release();
    await waitFor(() => b.alive.every((member) => member.id !== "a"), "b to notice a's death", 15_000);
    a = await ClusterNode.start(agentOptions("a", hostsFile, seeds), clusterOptions([b.address]));
    nodes.push(a);

    await waitFor(() => requests.includes(`${far}/only`), "the far page to be fetched", 15_000);
    expect(requests.filter((path) => path === `${near}/`)).toHaveLength(1);
  }, 40_000);
});

describe("a fetch in flight when its host is handed over", () => {
  it("goes to the new owner even when it ends put back in the old owner's queue", async () => {
    const requests: string[] = [];
    let releaseRobots = () => {};
    const robotsHeld = new Promise<void>((resolve) => {
      releaseRobots = resolve;
    });
    let robotsAsked = 0;
    server = createServer((request, response) => {
      const host = (request.headers.host ?? "").split(":")[0] ?? "";
      requests.push(`${host}${request.url}`);
      if (request.url === "/robots.txt") {
        // The first robots.txt request waits for the hand-over, then fails: its URL is put back.
        if (robotsAsked++ === 0) robotsHeld.then(() => response.writeHead(503).end());
        else response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": "text/html" }).end("<p>moved</p>");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const assignment = await assignmentOfAB();
    let moved = "";
    for (let i = 0; moved === ""; i++) {
      if (assignment.ownerOf(`h${i}.moved.test:${port}`) === "b") moved = `h${i}.moved.test`;
    }
    const hostsFile = join(dir, "hosts");
    await writeFile(hostsFile, `127.0.0.1 ${moved}\n`);

    // Alone, a owns every host: it takes the page and waits for the host's robots.txt.
    const a = await ClusterNode.start(
      agentOptions("a", hostsFile, [`http://${moved}:${port}/`]),
      clusterOptions([]),
    );
    nodes.push(a);
    await waitFor(() => robotsAsked > 0, "a to ask for robots.txt");
    const b = await ClusterNode.start(agentOptions("b", hostsFile, []), clusterOptions([a.address]));
    nodes.push(b);
    await waitFor(() => a.alive.some((member) => member.id === "b"), "a to see b");
    // The host is b's now; a's fetch ends without a robots.txt, and its URL goes back in a's queue.
    releaseRobots();

    const fetched = () => a.agent.stats.pagesFetched + b.agent.stats.pagesFetched;
    await waitFor(() => fetched() > 0, "the page to be fetched", 15_000);
    expect(requests.filter((path) => path === `${moved}/`)).toHaveLength(1);
    expect(b.agent.stats.pagesFetched).toBe(1);
    expect(a.agent.stats.pagesFetched).toBe(0);
  }, 40_000);
});

describe("the unacknowledged marks of the URL exchange, on a real store", () => {
  it("are cleared by an acknowledgement and by a restart's resend, and kept by a crash", async () => {
    const open = async () => {
      const store = await StateStore.open(join(dir, "state"));
      return { store, committer: new GroupCommit((ops) => store.write(ops)) };
    };
    const fingerprinter = new UrlFingerprinter(await loadHasher64());
    const exchangeOn = (state: { store: StateStore; committer: GroupCommit }, ack: boolean) =>
      new UrlExchange(
        {},
        {
          selfId: "a",
          incarnation: 1,
          clock: systemClock,
          stats: new CrawlStats(systemClock),
          committer: state.committer,
          store: state.store,
          fingerprinter,
          // Without an acknowledgement, the call waits until the exchange stops (the crash).
          submit: async (_peer, batch, signal) => {
            if (ack) return { accepted: batch.urls.length, forwarded: 0, duplicates: 0 };
            await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
            throw new Error("unreachable");
          },
          isAlive: () => true,
          sentAwayBefore: () => false,
          reroute: () => {},
          requeue: () => {},
          onSentAway: () => {},
          onDelivered: () => {},
        },
      );
    const url = (path: string) => `http://far.test/${path}`;
    const routedAfterRestart = async () => {
      const state = await open();
      const routed: string[] = [];
      await resendUnacked(state.store, state.committer, (again, depth, host) => {
        expect(host).toBe(hostKey(again));
        routed.push(`${again}@${depth}`);
      });
      await state.store.close();
      return routed.sort();
    };

    let state = await open();
    const delivered = exchangeOn(state, true);
    delivered.send("b", url("acked"), 0, "far.test");
    await delivered.drain();
    await state.committer.commit();
    const crashed = exchangeOn(state, false);
    crashed.send("b", url("lost-1"), 2, "far.test");
    crashed.send("c", url("lost-2"), 0, "far.test");
    // The page that found them is recorded: the marks are durable with it, the batches are not answered.
    await state.committer.commit();
    await delay(50);
    crashed.stop();
    await state.store.close();

    expect(await routedAfterRestart()).toEqual([`${url("lost-1")}@2`, `${url("lost-2")}@0`]);
    // Routed again once: the marks went with the resend (a new hand-off would have put them back).
    expect(await routedAfterRestart()).toEqual([]);

    state = await open();
    const again = exchangeOn(state, false);
    again.send("d", url("to-dead-peer"), 1, "far.test");
    await state.committer.commit();
    again.stop();
    // d crashed: its URLs are requeued (here or with a new owner) and their marks cleared with them.
    expect(await again.redistribute("d")).toBe(1);
    await state.store.close();
    expect(await routedAfterRestart()).toEqual([]);
  });
});

describe("a host drained for its new owner", () => {
  it("hands each URL off in the batch that dequeues it, whatever other writers commit meanwhile", async () => {
    const store = await StateStore.open(join(dir, "state"));
    onTestFinished(() => store.close());
    const batches: (readonly StateOp[])[] = [];
    const committer = new GroupCommit(async (ops) => {
      batches.push([...ops]);
      await store.write(ops);
    });
    const fingerprinter = new UrlFingerprinter(await loadHasher64());
    // A small window: the drain reads the rest of the queue from disk, one more await to race with.
    const frontier = await Frontier.open(
      { queueWindow: 2 },
      { store, committer, fingerprinter, onHostReady: () => {} },
    );
    const urls = Array.from({ length: 6 }, (_, i) => `http://moved.test/${i}`);
    for (const url of urls) frontier.add(url, 0, "moved.test");
    await frontier.commit();
    batches.length = 0;

    // Another writer (a visit, a received batch) commits at every turn while the host is drained.
    let draining = true;
    const otherWriter = (async () => {
      while (draining) {
        committer.commit().catch(() => {});
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const handedOff: string[] = [];
    await frontier.drainHost("moved.test", (entry) => {
      handedOff.push(entry.url);
      const fingerprint = fingerprinter.fingerprint(entry.url);
      committer.add(outboxOp("b", fingerprint, entry));
    });
    draining = false;
    await otherWriter;
    await frontier.commit();

    expect(handedOff).toEqual(urls);
    const dequeues = batches.map(
      (ops) => ops.filter((op) => op.range.name === "q" && op.type === "del").length,
    );
    const handOffs = batches.map(
      (ops) => ops.filter((op) => op.range.name === "o" && op.type === "put").length,
    );
    // Whichever commit wrote a dequeue also wrote its hand-off: a crash after it loses neither.
    expect(dequeues).toEqual(handOffs);
    expect(dequeues.reduce((sum, n) => sum + n, 0)).toBe(urls.length);
  });
});

describe("the previous owner's hand-over of a host", () => {
  it("waits for any fetch of the host in flight, so its new owner never sends it a second request at once", async () => {
    const store = await StateStore.open(join(dir, "state"));
    onTestFinished(() => store.close());
    const committer = new GroupCommit((ops) => store.write(ops));
    const fingerprinter = new UrlFingerprinter(await loadHasher64());
    const frontier = await Frontier.open({}, { store, committer, fingerprinter, onHostReady: () => {} });
    frontier.add("http://busy.test/a", 0, "busy.test");
    frontier.add("http://busy.test/b", 0, "busy.test");
    await frontier.commit();
    const inFlight = await frontier.take("busy.test");
    expect(inFlight?.url).toBe("http://busy.test/a");

    const events: string[] = [];
    // Another host: settled at once.
    expect(await frontier.quiesce("idle.test", 30_000)).toBe(true);
    // Too short a wait: false, the fetch still being in flight.
    expect(await frontier.quiesce("busy.test", 50)).toBe(false);
    const settled = frontier.quiesce("busy.test", 30_000).then((quiet) => {
      events.push("settled");
      return quiet;
    });
    await delay(200);
    events.push("fetch ended");
    frontier.complete("busy.test", inFlight as NonNullable<typeof inFlight>, { done: true, counted: true });
    expect(await settled).toBe(true);
    expect(events).toEqual(["fetch ended", "settled"]);
    // Durable once settled: the done set handed over includes /a.
    const done = await frontier.doneOf("busy.test", 0, 10);
    expect(done).toEqual([fingerprinter.fingerprint("http://busy.test/a")]);
  });
});

function agentOptions(id: string, hostsFile: string, seeds: string[]): AgentOptions {
  // These servers answer any path, and the tests count their pages one by one: no /sitemap.xml.
  return inProcessAgentOptions(
    { id, dataDir: join(dir, `data-${id}`), seeds, hostsFile },
    { sitemaps: "off" },
  );
}

function clusterOptions(join: string[]): ClusterOptions {
  return {
    listen: "127.0.0.1:0",
    join,
    capacity: 1,
    heartbeatIntervalMs: 100,
    suspectAfterMs: 600,
    recoveryK: 2,
    security: INSECURE,
  };
}

/** The assignment agents "a" and "b" compute together. */
async function assignmentOfAB(): Promise<Assignment> {
  return Assignment.build(
    [
      { id: "a", capacity: 1 },
      { id: "b", capacity: 1 },
    ],
    {},
    await loadHasher64(),
  );
}
