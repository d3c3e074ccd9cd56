import { join } from "node:path";
import { Assignment } from "../../src/hashing/index.js";
import { agentArgv, FAST_FAILURE_DETECTION, testWebAgentFlags } from "../../src/launch/index.js";
import { type AgentStats, INSECURE, PeerClient } from "../../src/transport/index.js";
import { readCrawlLogSoFar, runUbicrawl, type UbicrawlProcess, type WebFixture } from "../agent/harness.js";

/** Failure detector timing of test clusters: fast, so a death is noticed within about a second. */
export const FAST_HEARTBEAT = agentArgv({
  "heartbeat-ms": FAST_FAILURE_DETECTION["heartbeat-ms"],
  "suspect-after-ms": FAST_FAILURE_DETECTION["suspect-after-ms"],
}).slice(1);

/** One agent process of a test cluster. */
export interface ClusterAgent {
  readonly id: string;
  readonly dataDir: string;
  readonly process: UbicrawlProcess;
  readonly address: string;
}

/** How to start one cluster agent. */
export interface ClusterAgentOptions {
  readonly id: string;
  /** Addresses to `--join` (none: the first agent). */
  readonly join?: readonly string[];
  /** Give it the fixture's seeds. */
  readonly seeds?: boolean;
  /** Extra flags. */
  readonly flags?: readonly string[];
  /** `--data`. @default `<fixture dir>/data-<id>` */
  readonly dataDir?: string;
  /** `--listen`. @default `127.0.0.1:0` */
  readonly listen?: string;
  /** `--exit-when-done`; without it the agent runs until stopped. @default true */
  readonly exitWhenDone?: boolean;
}

/** Starts `ubicrawl agent --listen 127.0.0.1:0 …` and waits until it says where it listens. */
export async function startClusterAgent(
  fixture: WebFixture,
  options: ClusterAgentOptions,
): Promise<ClusterAgent> {
  const dataDir = options.dataDir ?? join(fixture.dir, `data-${options.id}`);
  const args = [
    ...agentArgv({
      ...testWebAgentFlags(fixture.hostsFile),
      ...FAST_FAILURE_DETECTION,
      id: options.id,
      data: dataDir,
      listen: options.listen ?? "127.0.0.1:0",
      ...(options.join && options.join.length > 0 ? { join: [options.join.join(",")] } : {}),
      ...(options.seeds ? { seeds: [fixture.seedsFile] } : {}),
      insecure: true,
      "exit-when-done": options.exitWhenDone ?? true,
    }),
    ...(options.flags ?? []),
  ];
  const process = runUbicrawl(args, { cwd: fixture.dir });
  return { id: options.id, dataDir, process, address: await process.listening(20_000) };
}

/** Starts `count` agents: the first alone, the others joining it; only the last gets the seeds. */
export async function startCluster(
  fixture: WebFixture,
  count: number,
  flags: readonly string[] = [],
): Promise<ClusterAgent[]> {
  const agents: ClusterAgent[] = [];
  for (let i = 1; i <= count; i++) {
    agents.push(
      await startClusterAgent(fixture, {
        id: `agent-${i}`,
        join: agents.map((agent) => agent.address),
        seeds: i === count,
        flags,
      }),
    );
  }
  return agents;
}

/** The cluster's stats, asked of `agent`. */
export async function clusterStats(address: string): Promise<AgentStats[]> {
  const client = new PeerClient(address, { security: INSECURE, requestDeadlineMs: 5000 });
  try {
    return (await client.getStats({ cluster: true })).agents;
  } finally {
    client.close();
  }
}

/** URLs with a response in each agent's crawl log so far, by agent id (a process or an in-process agent). */
export async function fetchedBy(
  agents: readonly Pick<ClusterAgent, "id" | "dataDir">[],
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  for (const agent of agents) {
    const entries = await readCrawlLogSoFar(agent.dataDir);
    result.set(
      agent.id,
      entries.filter((entry) => entry.status > 0).map((entry) => entry.url),
    );
  }
  return result;
}

/** The assignment the agents compute for these ids (every test agent has capacity 1). */
export function assignmentOf(ids: readonly string[]): Promise<Assignment> {
  return Assignment.load(ids.map((id) => ({ id, capacity: 1 })));
}

/** The host key (`name:port`) of a URL. */
export function hostKeyOf(url: string): string {
  return new URL(url).host;
}

/** The host (`name:port`) with the most URLs of `truthUrls` not served yet, and how many it has left. */
export function hostWithMostLeft(
  served: ReadonlyMap<string, number>,
  truthUrls: readonly string[],
): { host: string; remaining: number } {
  const left = new Map<string, number>();
  for (const url of truthUrls) {
    if (!served.has(url)) left.set(hostKeyOf(url), (left.get(hostKeyOf(url)) ?? 0) + 1);
  }
  const [host = "", remaining = 0] = [...left].sort((a, b) => b[1] - a[1])[0] ?? [];
  return { host, remaining };
}
