import { ErrorCode, UbiError } from "../errors.js";
import type { UbicrawlProcess } from "../launch/index.js";
import { CUT, type FaultMode, type FaultProxy, PASS } from "./fault-proxy.js";

/**
 * The faults of a local cluster's crawl (local-cluster.ts): agents killed and restarted, added through a
 * door that opens at the fault's moment, cut off from the others by their fault proxies, or leaving
 * gracefully some time after.
 */

/** How long an agent may take to listen. */
export const LISTEN_TIMEOUT_MS = 60_000;
/** How often the test web's count of requests is read, waiting for a fault's moment. */
const FAULT_POLL_MS = 20;

/** A fault of a local cluster (`runLocalCluster`): agents killed (and maybe restarted) or added mid-crawl. */
export interface LocalClusterFault {
  /** When: once the test web has served this many requests of this crawl (robots.txt included)… */
  readonly afterRequests: number;
  /**
   * …and this long after that, ms; or as `delayMs(atMs)` says, given when those requests were served
   * (ms since the epoch): a wait that depends on the moment. @default 0
   */
  readonly delayMs?: number | ((servedAtMs: number) => number);
  /** Agents SIGKILLed then: the last ones started. @default 0 */
  readonly kill?: number;
  /** Restarts the killed agents on their data folders this long after the kill; never when undefined. */
  readonly restartAfterMs?: number;
  /**
   * Agents that join then (`agent-(n+1)` …), with no seeds. Their processes start with the others', their
   * `--join` address a closed door (a proxy holding connections, see {@link FaultProxy}) that opens at
   * the fault's moment: what follows is the join, not a process's start-up, which on a loaded machine
   * takes seconds of a crawl that may end meanwhile. @default 0
   */
  readonly add?: number;
  /**
   * Agents cut off then from all the others, both ways: the last ones started, each alone (two cut off
   * do not reach each other either). Their cluster traffic goes through fault proxies from the start
   * (see {@link AgentProxies}). @default 0
   */
  readonly partition?: number;
  /** Joins the partition again this long after it was cut; never when undefined. */
  readonly healAfterMs?: number;
  /**
   * Agents that leave gracefully (SIGTERM: they hand their hosts over and exit) `leaveAfterMs` after the
   * fault's moment: the last ones started that are still running, the added ones left out. @default 0
   */
  readonly leave?: number;
  /** See {@link leave}; or as `leaveAfterMs(atMs)` says, given the fault's moment (ms since the epoch). @default 0 */
  readonly leaveAfterMs?: number | ((atMs: number) => number);
}

/**
 * The two proxies an agent's cluster traffic passes through, so that a partition can cut it: `ingress`,
 * the address it advertises (connections to it), and `egress`, the HTTP CONNECT proxy given to it as
 * `grpc_proxy` (connections from it). The laboratory itself talks to it at its bound address.
 */
export interface AgentProxies {
  readonly ingress: FaultProxy;
  readonly egress: FaultProxy;
}

/** When the fault of a local cluster (`runLocalCluster`) came, and to whom. */
export interface InjectedFault {
  /** The fault's moment, taken just before its kills, its cut or the opening of the added agents' door (epoch ms). */
  readonly atMs: number;
  readonly killed: readonly string[];
  /** When the killed agents were started again (epoch ms), if they were. */
  readonly restartedAtMs?: number;
  readonly added: readonly string[];
  /** Agents cut off from the others, and when they were joined again (epoch ms), if they were. */
  readonly partitioned: readonly string[];
  readonly healedAtMs?: number;
  /** Agents that left gracefully, and when they were told to (epoch ms), if any did. */
  readonly left: readonly string[];
  readonly leftAtMs?: number;
}

/** The agents of a local cluster, as {@link injectFault} acts on them. */
export interface FaultTargets {
  /** Requests the test web served in this crawl so far. */
  readonly served: () => number;
  /** Every process started so far (the fault's restarts are added). */
  readonly processes: UbicrawlProcess[];
  /** The agents to add, waiting at the door (empty if none). */
  readonly newcomers: readonly UbicrawlProcess[];
  readonly door: FaultProxy | undefined;
  readonly start: (id: string, join?: string) => UbicrawlProcess;
  readonly proxies: ReadonlyMap<string, AgentProxies>;
}

/**
 * Waits for `fault`'s moment, then kills, restarts, adds, cuts off and lets leave agents as it says.
 * Throws when the crawl ends first.
 */
export async function injectFault(
  fault: LocalClusterFault,
  { served, processes, newcomers, door, start, proxies }: FaultTargets,
): Promise<InjectedFault> {
  const waiting = new Set(newcomers);
  const live = () => processes.filter((p) => !p.exited && !waiting.has(p));
  while (served() < fault.afterRequests) {
    if (live().length === 0) {
      throw new UbiError(
        ErrorCode.ExperimentFailed,
        `the crawl ended after ${served()} requests, before the fault's moment (${fault.afterRequests})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, FAULT_POLL_MS));
  }
  const delayMs = typeof fault.delayMs === "function" ? fault.delayMs(Date.now()) : (fault.delayMs ?? 0);
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  const kill = fault.kill ?? 0;
  const victims = kill === 0 ? [] : live().slice(-kill);
  const atMs = Date.now();
  const partitioned = [...proxies.keys()];
  const setPartition = (mode: FaultMode) => {
    for (const { ingress, egress } of proxies.values()) {
      ingress.setMode(mode);
      egress.setMode(mode);
    }
  };
  setPartition(CUT);
  for (const victim of victims) victim.kill("SIGKILL");
  await Promise.all(victims.map((victim) => victim.exit));
  const joinAddress = async () => {
    const peer = live()[0];
    if (!peer) throw new UbiError(ErrorCode.ExperimentFailed, "no agent is left to join");
    return peer.listening(LISTEN_TIMEOUT_MS);
  };
  if (door !== undefined) {
    door.setTarget(await joinAddress());
    await Promise.all(newcomers.map((agent) => agent.listening(LISTEN_TIMEOUT_MS)));
  }
  let restartedAtMs: number | undefined;
  const restartAfterMs = fault.restartAfterMs;
  if (restartAfterMs !== undefined && victims.length > 0) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs + restartAfterMs - Date.now())));
    restartedAtMs = Date.now();
    const address = await joinAddress();
    await Promise.all(
      victims.map(async (victim) => {
        // A restarted agent listens on a port of its own: its ingress proxy forwards there now.
        const listening = await start(victim.name, address).listening(LISTEN_TIMEOUT_MS);
        proxies.get(victim.name)?.ingress.setTarget(listening);
      }),
    );
  }
  let healedAtMs: number | undefined;
  const healAfterMs = fault.healAfterMs;
  if (healAfterMs !== undefined && partitioned.length > 0) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs + healAfterMs - Date.now())));
    healedAtMs = Date.now();
    setPartition(PASS);
  }
  let leavers: UbicrawlProcess[] = [];
  let leftAtMs: number | undefined;
  if ((fault.leave ?? 0) > 0) {
    const leaveAfterMs =
      typeof fault.leaveAfterMs === "function" ? fault.leaveAfterMs(atMs) : (fault.leaveAfterMs ?? 0);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs + leaveAfterMs - Date.now())));
    // Those still running then (the crawl may have ended meanwhile).
    leavers = live().slice(-(fault.leave ?? 0));
    if (leavers.length > 0) leftAtMs = Date.now();
    for (const leaver of leavers) leaver.kill("SIGTERM");
  }
  return {
    atMs,
    killed: victims.map((victim) => victim.name),
    ...(restartedAtMs === undefined ? {} : { restartedAtMs }),
    added: newcomers.map((agent) => agent.name),
    partitioned,
    ...(healedAtMs === undefined ? {} : { healedAtMs }),
    left: leavers.map((leaver) => leaver.name),
    ...(leftAtMs === undefined ? {} : { leftAtMs }),
  };
}
