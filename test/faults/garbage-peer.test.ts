import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GARBAGE, PASS } from "../../src/lab/fault-proxy.js";
import type { Truth } from "../../src/testweb/index.js";
import {
  crawlMetrics,
  type ExitResult,
  servedPages,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "../agent/harness.js";
import {
  type ProxiedAgent,
  startProxiedCluster,
  stopProxies,
  viewsConverged,
  waitForExits,
} from "./proxied-cluster.js";

/**
 * A garbage peer: for a while, whatever connects to agent-2 (through its ingress proxy) is answered
 * with random bytes. The others' calls fail and are retried; nothing crashes; once the proxy passes
 * again, views converge and the crawl completes with full coverage.
 */

const WEB = { hosts: 24, pages: 1500, seed: 37, responseDelayMs: 6 };
const FLAGS = ["--max-active-hosts", "4"];
const GARBAGE_AT_SHARE = 0.1;
const GARBAGE_FOR_MS = 2500;

let fixture: WebFixture;
let truth: Truth;
let agents: ProxiedAgent[];
let exits = new Map<string, ExitResult>();
let convergedAfterGarbage = false;

beforeAll(async () => {
  fixture = await startWebFixture(WEB);
  truth = fixture.truth();
  agents = await startProxiedCluster(fixture, 3, FLAGS);
  const garbagePeer = agents[1] as ProxiedAgent;
  await waitFor(
    () => servedPages(fixture.web.recorder).size >= truth.urls.length * GARBAGE_AT_SHARE,
    "the crawl to get going",
    30_000,
  );
  garbagePeer.ingress.setMode(GARBAGE);
  await delay(GARBAGE_FOR_MS);
  garbagePeer.ingress.setMode(PASS);
  await waitFor(() => viewsConverged(agents), "views to converge after the garbage", 20_000, 50);
  convergedAfterGarbage = true;
  // The crawl's end after a takeover and a take-back: more than waitForExits' 45 s under CI's load.
  exits = await waitForExits(agents, 90_000);
}, 150_000);

afterAll(async () => {
  if (agents) await stopProxies(agents);
  await fixture?.stop();
});

describe("a garbage peer", () => {
  it("really answered garbage", () => {
    expect((agents[1] as ProxiedAgent).ingress.counters.garbled).toBeGreaterThan(0);
  });

  it("crashes nobody and views converge once it passes again", () => {
    expect(convergedAfterGarbage).toBe(true);
    for (const agent of agents) {
      const exit = exits.get(agent.id);
      expect(exit?.code, `${agent.id}:\n${exit?.stderr.slice(-2000)}`).toBe(0);
      expect(exit?.signal).toBeNull();
    }
  });

  it("completes the crawl with full coverage", () => {
    const metrics = crawlMetrics(servedPages(fixture.web.recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(metrics.extra).toEqual([]);
  });
});
