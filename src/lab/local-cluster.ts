import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { DEFAULT_PARTITIONING, type Partitioning, partitionKey } from "../cluster/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import { Assignment, loadHasher64 } from "../hashing/index.js";
import {
  AgentCluster,
  type AgentFlagValues,
  type ClusterMember,
  FAST_FAILURE_DETECTION,
  type ProcessExit,
  STEADY_FAILURE_DETECTION,
  testWebAgentFlags,
  type UbicrawlProcess,
} from "../launch/index.js";
import type { LogRecord } from "../logging/index.js";
import type { RunningTestWeb } from "../testweb/index.js";
import { hostKey } from "../url/index.js";
import { CpuQuotaGroup } from "./cpu-quota.js";
import { FaultProxy } from "./fault-proxy.js";
import {
  type AgentProxies,
  type InjectedFault,
  injectFault,
  LISTEN_TIMEOUT_MS,
  type LocalClusterFault,
} from "./local-cluster-fault.js";

export type { InjectedFault, LocalClusterFault } from "./local-cluster-fault.js";

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
  /** Picks each agent's seeds, given who owns each URL (by its host, or by itself with `--partition url`). */
  readonly seedsOf: (agentId: string, ownerOf: (url: string) => string) => readonly string[];
  /** The whole run fails past this. */
  readonly timeoutMs: number;
  /** A fault injected during the crawl. */
  readonly fault?: LocalClusterFault;
  /** Caps each agent at this percentage of one CPU, in a cgroup of its own (see cpu-quota.ts). */
  readonly cpuQuotaPercent?: number;
}

/** One agent of a finished {@link runLocalCluster}. */
export interface LocalAgentRun {
  readonly id: string;
  /** Its data folder: crawl log, WARC files, state. */
  readonly dir: string;
  readonly seeds: readonly string[];
  /** How its last process ended. */
  readonly exit: ProcessExit;
  /**
   * Its last process's last record, `stopped`, with the crawl's counters (exchange traffic, drops…);
   * undefined for an agent killed and not restarted.
   */
  readonly stopped?: LogRecord;
  /**
   * CPU seconds its last process spent from its seeds to its exit (its `stopped` record's CPU less what
   * it had used when the seeds were given); undefined when unknown (killed, restarted, or no /proc).
   */
  readonly crawlCpuSeconds?: number;
}

/** A finished {@link runLocalCluster}. */
export interface LocalClusterRun {
  readonly agents: readonly LocalAgentRun[];
  /** From the seeds given to the last agent's exit. */
  readonly seconds: number;
  /** The fault, as it came. */
  readonly fault?: InjectedFault;
  /**
   * The longest this process, which serves the test web, was held up from the seeds to the crawl's end
   * (its event loop's delay), ms: the test web may have stamped a request's start or end that much late.
   */
  readonly webLagMs: number;
  /**
   * `agent-suspected` records of every process: with no fault injected, each is a live agent taken for
   * dead (a machine too loaded for the failure detector), whose hosts others took and may have fetched again.
   */
  readonly suspicions: number;
}

/** How often this process's event loop delay is sampled during a crawl, ms. */
const LAG_RESOLUTION_MS = 10;

/**
 * Runs a crawl of `spec.web` by `spec.agents` agents: starts them all at once (joining the first), waits
 * until each one's view holds all of them alive, gives each the seeds `spec.seedsOf` picks among its own
 * hosts (its own URLs with `--partition url`; an operator `ADD_SEEDS`, so no seed crosses between
 * agents) — resetting the test web's recorder
 * then, so that its counts are the crawl's when the run returns — and waits for every agent to exit
 * at the crawl's end; injects `spec.fault` on the way. Kills them all and throws when an agent fails to
 * start, one not killed by the fault exits with no `stopped` record, the crawl ends before the fault's
 * moment, or the run passes its timeout.
 */
export async function runLocalCluster(spec: LocalClusterSpec): Promise<LocalClusterRun> {
  await mkdir(spec.dir, { recursive: true });
  const hostsFile = join(spec.dir, "hosts");
  await spec.web.writeHostsFile(hostsFile);
  const ids = Array.from({ length: spec.agents }, (_, i) => `agent-${i + 1}`);
  const cluster = new AgentCluster({
    flags: {
      ...testWebAgentFlags(hostsFile),
      // A fault is noticed fast; with none, a busy agent is not suspected by mistake.
      ...(spec.fault === undefined ? STEADY_FAILURE_DETECTION : FAST_FAILURE_DETECTION),
      ...spec.flags,
      insecure: true,
    },
    dataDirOf: (id) => dataDir(spec, id),
  });
  /** Every agent process started, in order. */
  const processes: UbicrawlProcess[] = [];
  const quotas: CpuQuotaGroup[] = [];
  const proxies = new Map<string, AgentProxies>();
  /** The added agents' `--join` address, until the fault's moment a proxy with no target. */
  let door: FaultProxy | undefined;
  /** The `--join` address of the agents started with the first, a proxy to the first once it listens. */
  let entrance: FaultProxy | undefined;
  const start = (id: string, join?: string, flags: AgentFlagValues = {}) => {
    const proxied = proxies.get(id);
    const agent = cluster.launch(id, {
      join: join === undefined ? [] : [join],
      flags: {
        ...flags,
        ...(proxied === undefined ? {} : { advertise: proxied.ingress.address }),
      },
      ...(proxied === undefined
        ? {}
        : {
            process: {
              env: {
                grpc_proxy: `http://${proxied.egress.address}`,
                // A no_proxy of the machine must not let its connections bypass the proxy.
                no_grpc_proxy: "no-proxy-bypass.invalid",
              },
            },
          }),
    }).process;
    processes.push(agent);
    if (spec.cpuQuotaPercent !== undefined) {
      const group = new CpuQuotaGroup(
        `ubicrawl-lab-${process.pid}-${processes.length}`,
        spec.cpuQuotaPercent,
      );
      quotas.push(group);
      group.add(agent.pid);
    }
    return agent;
  };
  const deadline = Date.now() + spec.timeoutMs;
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  try {
    for (const id of ids.slice(ids.length - Math.min(ids.length, spec.fault?.partition ?? 0))) {
      const ingress = await FaultProxy.start();
      proxies.set(id, { ingress, egress: await FaultProxy.start({ connect: true }) });
    }
    // The others start with the first, not once it listens: they join through a proxy that holds their
    // connections until the first's address is known (an agent's start is most of a small crawl's time).
    const toFirst = await FaultProxy.start();
    entrance = toFirst;
    const first = start(ids[0] as string);
    const others = ids
      .slice(1)
      .map((id) => start(id, toFirst.address, { "join-timeout-ms": spec.timeoutMs }));
    const firstAddress = await first.listening(LISTEN_TIMEOUT_MS);
    toFirst.setTarget(firstAddress);
    const addresses = [
      firstAddress,
      ...(await Promise.all(others.map((p) => p.listening(LISTEN_TIMEOUT_MS)))),
    ];
    ids.forEach((id, i) => {
      proxies.get(id)?.ingress.setTarget(addresses[i] as string);
    });
    await cluster.untilViewsHold(addresses, spec.agents, deadline);
    const newcomers: UbicrawlProcess[] = [];
    if ((spec.fault?.add ?? 0) > 0) {
      door = await FaultProxy.start();
      for (let i = 0; i < (spec.fault?.add ?? 0); i++) {
        // Trying to join through the door until it opens, however late the fault comes.
        const id = `agent-${ids.length + i + 1}`;
        newcomers.push(start(id, door.address, { "join-timeout-ms": spec.timeoutMs }));
      }
    }
    const hasher = await loadHasher64();
    const assignment = Assignment.build(
      ids.map((id) => ({ id })),
      {},
      hasher,
    );
    const partitioning: Partitioning = spec.flags.partition === "url" ? "url" : DEFAULT_PARTITIONING;
    const ownerOf = (url: string) => assignment.ownerOf(partitionKey(partitioning, url, hostKey(url)));
    const seeds = new Map(ids.map((id) => [id, spec.seedsOf(id, ownerOf)]));
    const cpuAtSeeds = new Map(ids.map((id) => [id, cpuSecondsOf(cluster.latest(id)?.process.pid)]));
    // From here the test web's counts are this crawl's: a fault's moment, and what the caller reads after.
    spec.web.recorder.reset();
    lag.enable();
    const startedAtMs = Date.now();
    await Promise.all(
      ids.map(async (id, i) => {
        const given = seeds.get(id) ?? [];
        for (const url of given) {
          if (ownerOf(url) !== id) {
            throw new UbiError(ErrorCode.InvalidArgument, `seed ${url} is not ${id}'s`);
          }
        }
        if (given.length > 0) await cluster.addSeeds(addresses[i] as string, given);
      }),
    );
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () =>
          reject(
            new UbiError(ErrorCode.ExperimentFailed, `the crawl did not end within ${spec.timeoutMs} ms`),
          ),
        Math.max(0, deadline - Date.now()),
      ).unref(),
    );
    const fault = spec.fault
      ? await Promise.race([
          injectFault(spec.fault, {
            served: () => spec.web.recorder.totalServed,
            processes,
            newcomers,
            door,
            start,
            proxies,
          }),
          timeout,
        ])
      : undefined;
    // Every process, those the fault started included, until the crawl's end.
    await Promise.race([Promise.all(processes.map((p) => p.exit)), timeout]);
    const seconds = (Date.now() - startedAtMs) / 1000;
    const agents: LocalAgentRun[] = [];
    for (const id of new Set(cluster.members.map((member) => member.id))) {
      const agent = (cluster.latest(id) as ClusterMember).process;
      const { code, signal } = await agent.exit;
      const exit = { code, signal };
      const stopped = agent.records().find((record) => record.event === "stopped");
      const killed = fault?.killed.includes(id) === true && fault.restartedAtMs === undefined;
      if (stopped === undefined && !killed) {
        throw new UbiError(
          ErrorCode.ExperimentFailed,
          `${id} exited (${JSON.stringify(exit)}) without its stopped record: ${agent.lastWords()}`,
        );
      }
      const before = cpuAtSeeds.get(id);
      const after = stopped?.cpuSeconds;
      const sameProcess = processes.filter((p) => p.name === id).length === 1;
      agents.push({
        id,
        dir: dataDir(spec, id),
        seeds: seeds.get(id) ?? [],
        exit,
        ...(stopped === undefined ? {} : { stopped }),
        ...(before !== undefined && typeof after === "number" && sameProcess
          ? { crawlCpuSeconds: after - before }
          : {}),
      });
    }
    const suspicions = processes
      .flatMap((agent) => agent.records())
      .filter((record) => record.event === "agent-suspected").length;
    return {
      seconds,
      agents,
      webLagMs: lag.max / 1e6,
      suspicions,
      ...(fault === undefined ? {} : { fault }),
    };
  } finally {
    lag.disable();
    cluster.killAll("SIGKILL");
    await cluster.exits();
    for (const group of quotas) group.remove();
    await Promise.all([
      ...[...proxies.values()].flatMap(({ ingress, egress }) => [ingress.stop(), egress.stop()]),
      door?.stop(),
      entrance?.stop(),
    ]);
  }
}

/** User + system CPU seconds of a running process (utime and stime of `/proc/<pid>/stat`), if known. */
function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces), from the 3rd: utime is the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The kernel's USER_HZ, which /proc reports times in (100 on Linux's every architecture in use). */
const CLOCK_TICKS_PER_SECOND = 100;

function dataDir(spec: LocalClusterSpec, id: string): string {
  return join(spec.dir, id);
}
