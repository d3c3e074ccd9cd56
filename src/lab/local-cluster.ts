import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import { Assignment, loadHasher64 } from "../hashing/index.js";
import {
  type AgentExit,
  type AgentFlagValues,
  AgentProcess,
  FAST_FAILURE_DETECTION,
  testWebAgentFlags,
} from "../launch/index.js";
import type { LogRecord } from "../logging/index.js";
import type { RunningTestWeb } from "../testweb/index.js";
import { INSECURE, PeerClient } from "../transport/index.js";
import { hostKey } from "../url/index.js";

/**
 * A crawl of the laboratory: n real agents as processes on the built-in test web, started before any
 * seed so the assignment is static while they crawl (Cho and Garcia-Molina's setting), each then given
 * the seeds of its own hosts, run until the cluster's termination detection ends the crawl.
 */

/** What {@link runLocalCluster} runs. */
export interface LocalClusterSpec {
  /** Folder of the run (created): the hosts file and a data folder per agent. */
  readonly dir: string;
  readonly web: RunningTestWeb;
  /** Agents to start: `agent-1` … `agent-n`, capacity 1 each. */
  readonly agents: number;
  /** Flags of every agent besides the test web's and the cluster's (a mode, a batch size…). */
  readonly flags: AgentFlagValues;
  /** Picks each agent's seeds, given who owns each host (`ownerOf` takes a URL's host key). */
  readonly seedsOf: (agentId: string, ownerOf: (hostKey: string) => string) => readonly string[];
  /** The whole run fails past this. */
  readonly timeoutMs: number;
}

/** One agent of a finished {@link runLocalCluster}. */
export interface LocalAgentRun {
  readonly id: string;
  /** Its data folder: crawl log, WARC files, state. */
  readonly dir: string;
  readonly seeds: readonly string[];
  readonly exit: AgentExit;
  /** Its last record, `stopped`, with the crawl's counters (exchange traffic, drops…). */
  readonly stopped: LogRecord;
}

/** A finished {@link runLocalCluster}. */
export interface LocalClusterRun {
  readonly agents: readonly LocalAgentRun[];
  /** From the seeds given to the last agent's exit. */
  readonly seconds: number;
}

/** How long an agent may take to listen. */
const LISTEN_TIMEOUT_MS = 60_000;
/** How often the membership is polled until every agent sees every other. */
const VIEW_POLL_MS = 100;

/**
 * Runs a crawl of `spec.web` by `spec.agents` agents: starts them all (joining the first), waits until
 * each one's view holds all of them alive, gives each the seeds `spec.seedsOf` picks among its own
 * hosts (an operator `ADD_SEEDS`, so no seed crosses between agents), and waits for every agent to exit
 * at the crawl's end. Kills them all and throws when an agent fails to start, exits before the end
 * with no `stopped` record, or the run passes its timeout.
 */
export async function runLocalCluster(spec: LocalClusterSpec): Promise<LocalClusterRun> {
  await mkdir(spec.dir, { recursive: true });
  const hostsFile = join(spec.dir, "hosts");
  await spec.web.writeHostsFile(hostsFile);
  const ids = Array.from({ length: spec.agents }, (_, i) => `agent-${i + 1}`);
  const processes: AgentProcess[] = [];
  const start = (id: string, join?: string) => {
    const agent = AgentProcess.start({
      ...testWebAgentFlags(hostsFile),
      ...FAST_FAILURE_DETECTION,
      ...spec.flags,
      id,
      data: dataDir(spec, id),
      listen: "127.0.0.1:0",
      insecure: true,
      ...(join === undefined ? {} : { join: [join] }),
    });
    processes.push(agent);
    return agent;
  };
  const deadline = Date.now() + spec.timeoutMs;
  try {
    const first = start(ids[0] as string);
    const firstAddress = await first.listening(LISTEN_TIMEOUT_MS);
    const others = ids.slice(1).map((id) => start(id, firstAddress));
    const addresses = [
      firstAddress,
      ...(await Promise.all(others.map((p) => p.listening(LISTEN_TIMEOUT_MS)))),
    ];
    await untilEveryoneSeesAll(addresses, spec.agents, deadline);
    const hasher = await loadHasher64();
    const assignment = Assignment.build(
      ids.map((id) => ({ id })),
      {},
      hasher,
    );
    const seeds = new Map(ids.map((id) => [id, spec.seedsOf(id, (host) => assignment.ownerOf(host))]));
    const startedAtMs = Date.now();
    await Promise.all(
      ids.map(async (id, i) => {
        const given = seeds.get(id) ?? [];
        for (const url of given) {
          if (assignment.ownerOf(hostKey(url)) !== id) {
            throw new UbiError(ErrorCode.InvalidArgument, `seed ${url} is not a host of ${id}`);
          }
        }
        if (given.length > 0) await control(addresses[i] as string, [...given]);
      }),
    );
    const exits = await Promise.race([
      Promise.all(processes.map((p) => p.exit)),
      new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(
              new UbiError(ErrorCode.ExperimentFailed, `the crawl did not end within ${spec.timeoutMs} ms`),
            ),
          Math.max(0, deadline - Date.now()),
        ).unref(),
      ),
    ]);
    const seconds = (Date.now() - startedAtMs) / 1000;
    return {
      seconds,
      agents: processes.map((agent, i) => {
        const stopped = agent.records.find((record) => record.event === "stopped");
        if (stopped === undefined) {
          throw new UbiError(
            ErrorCode.ExperimentFailed,
            `${agent.id} exited (${JSON.stringify(exits[i])}) without its stopped record: ${lastWords(agent)}`,
          );
        }
        return {
          id: agent.id,
          dir: dataDir(spec, agent.id),
          seeds: seeds.get(agent.id) ?? [],
          exit: exits[i] as AgentExit,
          stopped,
        };
      }),
    };
  } finally {
    for (const agent of processes) if (!agent.done) agent.child.kill("SIGKILL");
    await Promise.all(processes.map((agent) => agent.exit));
  }
}

function dataDir(spec: LocalClusterSpec, id: string): string {
  return join(spec.dir, id);
}

/** Polls each agent's stats until its view holds `n` alive agents. */
async function untilEveryoneSeesAll(
  addresses: readonly string[],
  n: number,
  deadline: number,
): Promise<void> {
  for (const address of addresses) {
    const client = new PeerClient(address, { security: INSECURE, requestDeadlineMs: 2000 });
    try {
      for (;;) {
        const { agents } = await client.operatorStats({ cluster: false });
        const alive = agents[0]?.view.filter((peer) => peer.status === "ALIVE").length ?? 0;
        if (alive >= n) break;
        if (Date.now() > deadline) {
          throw new UbiError(
            ErrorCode.ExperimentFailed,
            `agent at ${address} sees ${alive} of ${n} agents alive`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, VIEW_POLL_MS));
      }
    } finally {
      client.close();
    }
  }
}

/** Gives the agent at `address` its seeds (`ubicrawl ctl add-seeds`). */
async function control(address: string, urls: string[]): Promise<void> {
  const client = new PeerClient(address, { security: INSECURE, requestDeadlineMs: 10_000 });
  try {
    const reply = await client.control({ action: "ADD_SEEDS", argument: "", urls });
    if (!reply.ok) throw new UbiError(ErrorCode.InvalidArgument, `add-seeds refused: ${reply.message}`);
  } finally {
    client.close();
  }
}

/** The end of an agent's log, for an error. */
function lastWords(agent: AgentProcess): string {
  const last = agent.records.at(-1);
  return last ? `${last.msg}` : (agent.otherLines.at(-1) ?? "no output");
}
