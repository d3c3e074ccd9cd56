import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AGENT_DEFAULTS, type AgentOptions } from "../../src/agent/agent-options.js";
import { ClusterNode, type ClusterOptions } from "../../src/cluster/index.js";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { INSECURE, type UrlBatch } from "../../src/transport/index.js";
import { runUbicrawl } from "../agent/harness.js";

/**
 * The options this work added to a cluster node, in process: `advertise` (the address others are told)
 * and `maxConcurrentSubmits` (SubmitUrls handlers at once; past it, `Overloaded`, which senders retry).
 */

let dir: string;
let node: ClusterNode | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-faults-"));
  await writeFile(join(dir, "hosts"), "# no names: every lookup fails at once, no DNS\n");
});

afterEach(async () => {
  await node?.stop();
  node = undefined;
  await rm(dir, { recursive: true, force: true });
});

function agentOptions(): AgentOptions {
  return {
    ...AGENT_DEFAULTS,
    id: "solo",
    dataDir: join(dir, "data"),
    seeds: [],
    hostsFile: join(dir, "hosts"),
    allowNet: [],
    scopes: [],
    exitWhenDone: false,
    progress: "off",
  };
}

function clusterOptions(extra: Partial<ClusterOptions> = {}): ClusterOptions {
  return {
    listen: "127.0.0.1:0",
    join: [],
    capacity: 1,
    heartbeatIntervalMs: 200,
    suspectAfterMs: 1200,
    recoveryK: 2,
    security: INSECURE,
    ...extra,
  };
}

function batch(id: string): UrlBatch {
  return { batchId: id, fromId: "peer", urls: [{ url: `http://flood.invalid/${id}`, depth: 1 }] };
}

describe("ClusterNode --advertise", () => {
  it("is the address in its own view and stats; the server stays bound where it listens", async () => {
    node = await ClusterNode.start(agentOptions(), clusterOptions({ advertise: "proxy.example:7000" }));
    expect(node.address).toBe("proxy.example:7000");
    expect(node.listenAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(node.listenAddress).not.toBe("127.0.0.1:0");
    expect(node.alive.map((member) => member.address)).toEqual(["proxy.example:7000"]);
    expect(node.stats().address).toBe("proxy.example:7000");
  });

  it("defaults to the bound address", async () => {
    node = await ClusterNode.start(agentOptions(), clusterOptions());
    expect(node.address).toBe(node.listenAddress);
  });

  it.each([["no-port"], ["host:0"], [""]])("refuses advertise %j", async (advertise) => {
    const error = await ClusterNode.start(agentOptions(), clusterOptions({ advertise })).catch((e) => e);
    expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
  });

  it("is refused by the CLI without --listen", async () => {
    const proc = runUbicrawl([
      "agent",
      "--id",
      "a",
      "--data",
      join(dir, "cli"),
      "--advertise",
      "127.0.0.1:9",
    ]);
    const exit = await proc.waitForExit(20_000);
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain("--advertise needs --listen");
  });
});

describe("ClusterNode partitioning", () => {
  it("refuses at once a newcomer that partitions otherwise, saying both; one that agrees joins", async () => {
    node = await ClusterNode.start(agentOptions(), clusterOptions({ partitioning: "url" }));
    const byHost = await ClusterNode.start(
      { ...agentOptions(), id: "by-host", dataDir: join(dir, "by-host") },
      clusterOptions({ join: [node.address], joinTimeoutMs: 20_000 }),
    ).catch((error: unknown) => error);
    expect(isUbiError(byHost, ErrorCode.BadMessage), String(byHost)).toBe(true);
    expect((byHost as Error).message).toContain(
      "agent by-host partitions by host, this cluster by url: every agent of a cluster must use the same --partition",
    );
    const byUrl = await ClusterNode.start(
      { ...agentOptions(), id: "by-url", dataDir: join(dir, "by-url") },
      clusterOptions({ join: [node.address], partitioning: "url" }),
    );
    try {
      expect(byUrl.alive.map((member) => member.id).sort()).toEqual(["by-url", "solo"]);
    } finally {
      await byUrl.stop();
    }
  });
});

describe("--partition", () => {
  it("refuses url with the cross-over mode, which crosses into hosts, and a partition it does not know", async () => {
    const args = [
      "agent",
      "--id",
      "a",
      "--data",
      join(dir, "partition"),
      "--listen",
      "127.0.0.1:0",
      "--insecure",
    ];
    const cross = await runUbicrawl([...args, "--partition", "url", "--mode", "cross"]).waitForExit(20_000);
    expect(cross.code).not.toBe(0);
    expect(cross.stderr).toContain(
      "--mode cross crosses into other agents' hosts: it has no meaning with --partition url",
    );
    const lone = await runUbicrawl([
      "agent",
      "--id",
      "a",
      "--data",
      join(dir, "partition"),
      "--partition",
      "url",
    ]).waitForExit(20_000);
    expect(lone.code).not.toBe(0);
    expect(lone.stderr).toContain("--partition url needs --listen");
    const unknown = await runUbicrawl([...args, "--partition", "domain"]).waitForExit(20_000);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('"domain"');
  });
});

describe("ClusterNode SubmitUrls limit", () => {
  it("refuses batches past maxConcurrentSubmits with Overloaded, and takes them again later", async () => {
    node = await ClusterNode.start(agentOptions(), clusterOptions({ maxConcurrentSubmits: 2 }));
    node.agent.pause(); // nothing is to be fetched here
    const results = await Promise.allSettled(
      ["b1", "b2", "b3"].map((id) => node?.handlers.submitUrls(batch(id))),
    );
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    const refusal = (results[2] as PromiseRejectedResult).reason;
    expect(isUbiError(refusal, ErrorCode.Overloaded)).toBe(true);
    // The handlers finished: the refused batch is accepted on retry.
    await expect(node.handlers.submitUrls(batch("b3"))).resolves.toEqual({
      accepted: 1,
      forwarded: 0,
      duplicates: 0,
    });
  });

  it("refuses a non-positive maxConcurrentSubmits", async () => {
    const error = await ClusterNode.start(agentOptions(), clusterOptions({ maxConcurrentSubmits: 0 })).catch(
      (e) => e,
    );
    expect(isUbiError(error, ErrorCode.InvalidArgument)).toBe(true);
  });
});
