/** Sample messages, a recording fake handler and assertions for the transport tests. */

import { expect, onTestFinished } from "vitest";
import { UbiError } from "../../src/errors.js";
import type { Logger } from "../../src/logging/index.js";
import {
  type AgentLoad,
  AgentServer,
  type AgentServerOptions,
  type AgentServiceHandlers,
  type AgentStats,
  type BlacklistSync,
  type ClaimReply,
  type ControlReply,
  type DigestSettleAck,
  type DigestVerdicts,
  type HandOverReply,
  type HeartbeatReply,
  type IpReply,
  type JoinReply,
  type Member,
  PeerClient,
  type StatsReply,
  type UrlBatchAck,
} from "../../src/transport/index.js";

export function member(id: string, port = 7001): Member {
  return {
    id,
    address: `127.0.0.1:${port}`,
    capacity: 2,
    incarnation: 3,
    status: "ALIVE",
    lastHeardMsAgo: 40,
  };
}

export const LOAD: AgentLoad = {
  idle: false,
  urlBatchesSent: 12,
  urlBatchesReceived: 11,
  pagesFetched: 345,
  queuedUrls: 67,
  spareHostSlots: 0,
  revisitPages: 0,
  revisitBudget: 0,
};

export const STATS: AgentStats = {
  id: "agent-b",
  address: "127.0.0.1:7002",
  capacity: 1,
  replicas: 200,
  circleShare: 0.5,
  view: [{ id: "agent-a", address: "127.0.0.1:7001", status: "SUSPECTED", lastHeardMsAgo: 1500 }],
  hostsOwned: 10,
  hostsKnown: 25,
  hostsActive: 3,
  hostsDone: 4,
  pagesFetched: 120,
  bytesFetched: 9_007_199_254_740_000,
  queuedUrls: 33,
  peers: [{ peerId: "agent-a", urlsSent: 50, urlsReceived: 40, batchesSent: 5, batchesReceived: 4 }],
  communicationOverhead: 0.4166,
  linksToOtherAgents: 12,
  pagesRecovered: 2,
  errors: { UBI_ERR_CONNECT_FAILED: 3, UBI_ERR_BODY_TIMEOUT: 1 },
  pagesPerSecond: 12.5,
  uptimeMs: 60_000,
  idle: false,
  paused: true,
  hostsHeld: 7,
  heldFor: ["agent-a"],
  pagesFetchedThisRun: 20,
  status: "ALIVE",
  reportedMsAgo: 0,
  waiting: [{ reason: "robots", hosts: 3, nextInMs: 41_000 }],
  duplicates: 9,
  duplicateBytes: 123_456,
  digestMessages: 14,
  revisits: {
    planned: 40,
    queued: 9,
    revisited: 8,
    notModified: 3,
    unchanged: 2,
    changed: 2,
    missed: 1,
    overdueMs: 1500,
    received: 6,
    estimatedFreshness: 0.625,
    freshnessPages: 310,
    budget: 12.25,
    budgetPages: 320,
  },
  payloadCopies: 2,
  payloadsUnchecked: 5,
  busiestIps: [
    {
      ip: "127.2.0.1",
      hosts: 3,
      moreHosts: false,
      hostNames: ["a.test", "b.test", "c.test:8080"],
      keeper: "agent-b",
      inFlight: 1,
      waiting: 2,
      startedRecently: 40,
      started: 90,
      meanWaitMsRecently: 120,
      maxWaitMsRecently: 900,
      waitedMs: 15_000,
      refusalsRecently: 1,
      refusals: 2,
      line: 1,
      blockedForMs: 500,
      delayMs: 200,
    },
  ],
};

type Calls = { [K in keyof AgentServiceHandlers]: Parameters<AgentServiceHandlers[K]>[0][] };

/** A handler object that records requests and answers with fixed replies (overridable). */
export class FakeHandlers implements AgentServiceHandlers {
  readonly calls: Calls = {
    join: [],
    heartbeat: [],
    submitUrls: [],
    claimHosts: [],
    handOverHosts: [],
    getStats: [],
    control: [],
    syncBlacklist: [],
    checkDigests: [],
    settleDigests: [],
    ipGrants: [],
  };

  get totalCalls(): number {
    return Object.values(this.calls).reduce((sum, list) => sum + list.length, 0);
  }

  async join(request: Calls["join"][number]): Promise<JoinReply> {
    this.calls.join.push(request);
    return { members: [member("agent-b", 7002), request.member] };
  }

  async heartbeat(request: Calls["heartbeat"][number]): Promise<HeartbeatReply> {
    this.calls.heartbeat.push(request);
    return {
      members: [member("agent-b", 7002)],
      load: { ...LOAD, idle: true },
      from: member("agent-b", 7002),
    };
  }

  async submitUrls(request: Calls["submitUrls"][number]): Promise<UrlBatchAck> {
    this.calls.submitUrls.push(request);
    return { accepted: request.urls.length - 1, forwarded: 1, duplicates: 0 };
  }

  /** Hosts whose name starts with "old" were held here, with two done URLs; the others never were. */
  async claimHosts(request: Calls["claimHosts"][number]): Promise<ClaimReply> {
    this.calls.claimHosts.push(request);
    return {
      hosts: request.hosts.map(({ host }) => ({
        host,
        status: host.startsWith("old") ? ("GRANTED" as const) : ("NOT_HELD" as const),
        holder: null,
        done: host.startsWith("old") ? new Uint8Array(16).fill(7) : new Uint8Array(),
        more: false,
        pagesFetched: host.startsWith("old") ? 2 : 0,
        abandoned: "",
      })),
    };
  }

  async handOverHosts(request: Calls["handOverHosts"][number]): Promise<HandOverReply> {
    this.calls.handOverHosts.push(request);
    return { taken: request.hosts.length };
  }

  async getStats(request: Calls["getStats"][number]): Promise<StatsReply> {
    this.calls.getStats.push(request);
    return { agents: request.cluster ? [STATS, { ...STATS, id: "agent-c" }] : [STATS] };
  }

  async control(request: Calls["control"][number]): Promise<ControlReply> {
    this.calls.control.push(request);
    return { ok: true, message: `${request.action} ${request.argument}`.trim() };
  }

  /** Answers with the entries received and one of its own. */
  async syncBlacklist(request: Calls["syncBlacklist"][number]): Promise<BlacklistSync> {
    this.calls.syncBlacklist.push(request);
    const own = {
      pattern: "*.spam.test",
      blocked: true,
      changedAtMs: 1_700_000_000_000,
      changedBy: "agent-b",
    };
    return { entries: [...request.entries, own] };
  }

  /** The first digest was stored before, the others are new. */
  async checkDigests(request: Calls["checkDigests"][number]): Promise<DigestVerdicts> {
    this.calls.checkDigests.push(request);
    return {
      verdicts: request.digests.map((_, i) =>
        i === 0
          ? {
              state: "DIGEST_SEEN" as const,
              original: {
                url: "http://a.test/",
                date: "2026-11-27T10:00:00.000Z",
                recordId: "<urn:uuid:01234567-89ab-cdef-0123-456789abcdef>",
              },
            }
          : { state: "DIGEST_NEW" as const, original: null },
      ),
    };
  }

  async settleDigests(request: Calls["settleDigests"][number]): Promise<DigestSettleAck> {
    this.calls.settleDigests.push(request);
    return {};
  }

  /** Grants one slot per ask, numbered from 1. */
  async ipGrants(request: Calls["ipGrants"][number]): Promise<IpReply> {
    this.calls.ipGrants.push(request);
    return {
      grants: request.asks.map((_, i) => ({
        kind: "IP_GRANT_SLOT" as const,
        slotId: i + 1,
        ttlMs: 60_000,
        waitMs: 0,
        blockedForMs: 0,
        delayMs: 0,
        heldMs: 0,
        leaseId: 0,
        startSlackMs: 0,
      })),
    };
  }
}

/**
 * Rejection of `promise`, asserted to be a UbiError. Call it when the promise is made (await it later)
 * so that a rejection meanwhile counts as handled.
 */
export async function failure(promise: Promise<unknown>): Promise<UbiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UbiError);
  return error as UbiError;
}

/**
 * An agent server on a free loopback port with `handlers`, and a client of it; both closed when the
 * test finishes.
 */
export async function startServer(
  handlers: AgentServiceHandlers = new FakeHandlers(),
  options: AgentServerOptions = {},
  logger?: Logger,
): Promise<{ server: AgentServer; client: PeerClient; address: string }> {
  const server = new AgentServer(options, { handlers, ...(logger ? { logger } : {}) });
  const address = await server.start("127.0.0.1:0");
  const client = new PeerClient(address);
  onTestFinished(async () => {
    client.close();
    await server.stop();
  });
  return { server, client, address };
}
