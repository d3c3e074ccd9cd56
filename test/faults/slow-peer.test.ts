import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slow } from "../../src/lab/fault-proxy.js";
import type { Truth } from "../../src/testweb/index.js";
import type { AgentStats } from "../../src/transport/index.js";
import {
  crawlMetrics,
  type ExitResult,
  servedPages,
  startWebFixture,
  type WebFixture,
} from "../agent/harness.js";
import { assignmentOf, fetchedBy, hostKeyOf } from "../cluster/cluster-harness.js";
import {
  ownStats,
  type ProxiedAgent,
  startProxiedCluster,
  stopProxies,
  waitForExits,
} from "./proxied-cluster.js";

/**
 * A slow peer: every chunk to and from agent-2 (through its ingress proxy) is delayed 300 ms for the
 * whole crawl. Its heartbeats out still arrive on time, so nobody suspects it; the others keep crawling,
 * their batches to it get through (late), and the crawl completes with full coverage and no overlap.
 */

const WEB = { hosts: 24, pages: 1200, seed: 31, responseDelayMs: 5 };
const FLAGS = ["--max-active-hosts", "4"];
const DELAY_MS = 300;

let fixture: WebFixture;
let truth: Truth;
let agents: ProxiedAgent[];
let exits = new Map<string, ExitResult>();
/** agent-2's last stats before it exited. */
let slowStats: AgentStats | undefined;

beforeAll(async () => {
  fixture = await startWebFixture(WEB);
  truth = fixture.truth();
  agents = await startProxiedCluster(fixture, 3, FLAGS);
  const slowPeer = agents[1] as ProxiedAgent;
  slowPeer.ingress.setMode(slow(DELAY_MS));
  const exiting = waitForExits(agents);
  let done = false;
  exiting.finally(() => {
    done = true;
  });
  // Sample the slow peer's own stats (directly, not through its proxy) until it exits.
  while (!done) {
    slowStats = (await ownStats(slowPeer)) ?? slowStats;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  exits = await exiting;
}, 90_000);

afterAll(async () => {
  if (agents) await stopProxies(agents);
  await fixture?.stop();
});

describe("a slow peer", () => {
  it("is slowed for real", () => {
    expect((agents[1] as ProxiedAgent).ingress.counters.delayed).toBeGreaterThan(0);
  });

  it("gets the others' batches through the slow link", () => {
    const received = slowStats?.peers.filter((peer) => peer.batchesReceived > 0).map((peer) => peer.peerId);
    expect(received?.sort()).toEqual(["agent-1", "agent-3"]);
  });

  it("does not stop the others: every agent crawls its own hosts, nobody else's", async () => {
    const owners = await assignmentOf(agents.map((agent) => agent.id));
    for (const [id, urls] of await fetchedBy(agents)) {
      expect(urls.length, id).toBeGreaterThan(0);
      expect(urls.filter((url) => owners.ownerOf(hostKeyOf(url)) !== id)).toEqual([]);
    }
  });

  it("completes the crawl with full coverage", () => {
    for (const agent of agents) {
      expect(exits.get(agent.id)?.code, `${agent.id}:\n${exits.get(agent.id)?.stderr.slice(-2000)}`).toBe(0);
    }
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.overlap).toBe(0);
    expect(fixture.web.recorder.maxConcurrencyPerHost()).toBe(1);
  });
});
