import { join } from "node:path";
import { Assignment } from "../../src/hashing/index.js";
import {
  AgentCluster,
  agentArgv,
  type ClusterMember,
  FAST_FAILURE_DETECTION,
  testWebAgentFlags,
} from "../../src/launch/index.js";
import { type AgentStats, INSECURE, PeerClient } from "../../src/transport/index.js";
import { readCrawlLogSoFar, trackUbicrawl, type WebFixture } from "../agent/harness.js";

/** Failure detector timing of test clusters: fast, so a death is noticed within about a second. */
export const FAST_HEARTBEAT = agentArgv({
  "heartbeat-ms": FAST_FAILURE_DETECTION["heartbeat-ms"],
  "suspect-after-ms": FAST_FAILURE_DETECTION["suspect-after-ms"],
}).slice(1);

/** One agent process of a test cluster. */
export type ClusterAgent = ClusterMember & { readonly address: string };

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
  /** `--exit-when-done`; without it the agent runs until stopped. @default true */
  readonly exitWhenDone?: boolean;
}

/**
 * The agents of a fixture's test cluster: on its web (hosts file, fast failure detection, plaintext),
 * in its folder, each process tracked so that a failed test still kills it.
 */
const clusters = new WeakMap<WebFixture, AgentCluster>();

function clusterOf(fixture: WebFixture): AgentCluster {
  let cluster = clusters.get(fixture);
  if (cluster === undefined) {
    cluster = new AgentCluster({
      flags: { ...testWebAgentFlags(fixture.hostsFile), ...FAST_FAILURE_DETECTION, insecure: true },
      dataDirOf: (id) => join(fixture.dir, `data-${id}`),
      process: { cwd: fixture.dir },
      onLaunch: (member) => trackUbicrawl(member.process, fixture.dir, member.id),
    });
    clusters.set(fixture, cluster);
  }
  return cluster;
}

/** Starts `ubicrawl agent --listen 127.0.0.1:0 …` and waits until it says where it listens. */
export function startClusterAgent(fixture: WebFixture, options: ClusterAgentOptions): Promise<ClusterAgent> {
  return clusterOf(fixture).start(options.id, {
    join: options.join ?? [],
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    flags: {
      ...(options.seeds ? { seeds: [fixture.seedsFile] } : {}),
      "exit-when-done": options.exitWhenDone ?? true,
    },
    args: options.flags ?? [],
  });
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
