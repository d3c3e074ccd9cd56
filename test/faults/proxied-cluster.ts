import { readFile } from "node:fs/promises";
import { FaultProxy, PASS } from "../../src/lab/fault-proxy.js";
import { type AgentStats, INSECURE, PeerClient } from "../../src/transport/index.js";
import type { ExitResult, WebFixture } from "../agent/harness.js";
import {
  type ClusterAgent,
  type ClusterAgentOptions,
  startClusterAgent,
} from "../cluster/cluster-harness.js";

/**
 * Test clusters whose agents reach each other only through fault proxies in the test process, so any
 * link can be cut, slowed or garbled. Each agent has two proxies:
 * - `ingress`, the address it advertises (`--advertise`): every connection *to* it goes through it;
 * - `egress`, an HTTP CONNECT proxy given to it as `grpc_proxy`: every connection *from* it goes through
 *   it (grpc-js honours that variable).
 * Cutting both isolates one agent from all the others in both directions (a 1|n−1 partition) while the
 * others still talk to each other. The test process itself talks to agents at their bound addresses.
 */

/** One agent of a proxied cluster. */
export interface ProxiedAgent extends ClusterAgent {
  /** The address the gRPC server is bound to (`address` is the same; named for clarity). */
  readonly listenAddress: string;
  /** In front of the agent: its advertised address. */
  readonly ingress: FaultProxy;
  /** Behind the agent: its outgoing gRPC connections. */
  readonly egress: FaultProxy;
}

/** Starts the two proxies and an agent (`--listen 127.0.0.1:0 --advertise <ingress>`) behind them. */
export async function startProxiedAgent(
  fixture: WebFixture,
  options: ClusterAgentOptions,
): Promise<ProxiedAgent> {
  const ingress = await FaultProxy.start(); // its target is known once the agent says where it listens
  const egress = await FaultProxy.start({ connect: true });
  const saved = { grpc_proxy: process.env.grpc_proxy, no_grpc_proxy: process.env.no_grpc_proxy };
  // The child copies the environment when spawned, which startClusterAgent does before its first await:
  // setting it around that synchronous part gives this child (only) its egress proxy.
  process.env.grpc_proxy = `http://${egress.address}`;
  process.env.no_grpc_proxy = "no-proxy-bypass.invalid"; // a no_proxy of the machine must not bypass it
  let starting: Promise<ClusterAgent>;
  try {
    starting = startClusterAgent(fixture, {
      ...options,
      flags: ["--advertise", ingress.address, ...(options.flags ?? [])],
    });
  } finally {
    restoreEnv("grpc_proxy", saved.grpc_proxy);
    restoreEnv("no_grpc_proxy", saved.no_grpc_proxy);
  }
  let agent: ClusterAgent;
  try {
    agent = await starting;
  } catch (error) {
    await Promise.all([ingress.stop(), egress.stop()]);
    throw error;
  }
  ingress.setTarget(agent.address);
  return { ...agent, listenAddress: agent.address, ingress, egress };
}

/** Starts `count` proxied agents `agent-1…`, each joining the earlier ones' advertised addresses. */
export async function startProxiedCluster(
  fixture: WebFixture,
  count: number,
  flags: readonly string[] = [],
): Promise<ProxiedAgent[]> {
  const agents: ProxiedAgent[] = [];
  for (let i = 1; i <= count; i++) {
    agents.push(
      await startProxiedAgent(fixture, {
        id: `agent-${i}`,
        join: agents.map((agent) => agent.ingress.address),
        seeds: i === count,
        flags,
      }),
    );
  }
  return agents;
}

/** Stops every proxy of `agents`. */
export async function stopProxies(agents: readonly ProxiedAgent[]): Promise<void> {
  await Promise.all(agents.flatMap((agent) => [agent.ingress.stop(), agent.egress.stop()]));
}

/** Isolates `agent` from every other agent, both ways (`heal` undoes it). */
export function partition(agent: ProxiedAgent): void {
  agent.ingress.setMode({ kind: "cut" });
  agent.egress.setMode({ kind: "cut" });
}

/** Undoes {@link partition}. */
export function heal(agent: ProxiedAgent): void {
  agent.ingress.setMode(PASS);
  agent.egress.setMode(PASS);
}

/** One agent's own stats, asked directly at its bound address (undefined when it does not answer). */
export async function ownStats(agent: ProxiedAgent): Promise<AgentStats | undefined> {
  if (agent.process.exited) return undefined;
  const client = new PeerClient(agent.listenAddress, { security: INSECURE, requestDeadlineMs: 3000 });
  try {
    return (await client.getStats({ cluster: false })).agents[0];
  } catch {
    return undefined;
  } finally {
    client.close();
  }
}

/** Ids `agent` regards as alive (itself included), or undefined when it does not answer. */
export async function aliveSeenBy(agent: ProxiedAgent): Promise<string[] | undefined> {
  const stats = await ownStats(agent);
  return stats?.view
    .filter((member) => member.status === "ALIVE")
    .map((member) => member.id)
    .sort();
}

/** True when every agent answers and sees exactly the ids of `agents` alive. */
export async function viewsConverged(agents: readonly ProxiedAgent[]): Promise<boolean> {
  const expected = agents.map((agent) => agent.id).sort();
  const views = await Promise.all(agents.map(aliveSeenBy));
  return views.every((view) => view !== undefined && view.join(",") === expected.join(","));
}

/** The peak resident set (`VmHWM`, bytes) of process `pid`, from `/proc/<pid>/status` (Linux). */
export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (!match?.[1]) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** Waits for every agent to exit by itself (`--exit-when-done`); the exit results by agent id. */
export async function waitForExits(
  agents: readonly ProxiedAgent[],
  timeoutMs = 45_000,
): Promise<Map<string, ExitResult>> {
  const results = await Promise.all(agents.map((agent) => agent.process.waitForExit(timeoutMs)));
  return new Map(agents.map((agent, i) => [agent.id, results[i] as ExitResult]));
}
