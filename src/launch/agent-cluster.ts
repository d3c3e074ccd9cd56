import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, UbiError } from "../errors.js";
import { type AgentStats, INSECURE, PeerClient, type TransportSecurity } from "../transport/index.js";
import type { AgentFlagValues } from "./agent-command-line.js";
import { type ExitResult, UbicrawlProcess, type UbicrawlProcessOptions } from "./ubicrawl-process.js";

/** How long a started agent may take to say where it listens, ms. */
export const AGENT_LISTEN_TIMEOUT_MS = 60_000;

/** How often {@link AgentCluster.untilViewsHold} asks the agents for their views, ms. */
const VIEW_POLL_MS = 100;

/** How long the cluster's calls to one of its agents may take, ms: seeds, and questions (views, stats). */
const CALL_DEADLINE_MS = 10_000;
const QUESTION_DEADLINE_MS = 2_000;

/** One agent process of an {@link AgentCluster}; an agent restarted is a member of its own. */
export interface ClusterMember {
  readonly id: string;
  readonly dataDir: string;
  readonly process: UbicrawlProcess;
  /** Where it serves agent-to-agent gRPC, once it said so. */
  address?: string;
}

/** How an {@link AgentCluster} starts its agents. */
export interface AgentClusterOptions {
  /** Flags of every agent (the web's, the failure detector's…), under each start's own. */
  readonly flags: AgentFlagValues;
  /** An agent's data folder (`--data`). */
  readonly dataDirOf: (id: string) => string;
  /** Credentials of the cluster's own calls to its agents (stats, seeds). @default plaintext */
  readonly security?: TransportSecurity;
  /** How every process starts (its working directory…), under each start's own. */
  readonly process?: Omit<UbicrawlProcessOptions, "name">;
  /** Told of each agent process as it is spawned. */
  readonly onLaunch?: (member: ClusterMember) => void;
}

/** How one agent of an {@link AgentCluster} starts, beyond the cluster's options. */
export interface AgentStart {
  /** The addresses it joins through. @default the live agents' (none: it starts a cluster) */
  readonly join?: readonly string[];
  /** Its data folder. @default the cluster's `dataDirOf(id)` */
  readonly dataDir?: string;
  /** Its own flags, over the cluster's. */
  readonly flags?: AgentFlagValues;
  /** Arguments after its flags, as they are. */
  readonly args?: readonly string[];
  /** How its process starts (a proxy's environment…), over the cluster's. */
  readonly process?: Omit<UbicrawlProcessOptions, "name">;
}

/**
 * The agents of one cluster on this machine, each a `ubicrawl agent` process listening on loopback and
 * joining the others: started, watched, asked (views, stats, seeds), killed and stopped. The one
 * orchestrator of `ubicrawl cluster`, the laboratory's crawls and the tests; what each adds on top
 * (a console, faults, certificates) stays with it.
 */
export class AgentCluster {
  readonly #members: ClusterMember[] = [];

  constructor(private readonly options: AgentClusterOptions) {}

  /** Every agent process started, in order, those that exited included. */
  get members(): readonly ClusterMember[] {
    return this.#members;
  }

  /** The agent processes still running. */
  live(): ClusterMember[] {
    return this.#members.filter((member) => !member.process.exited);
  }

  /** Where the running agents that said so listen. */
  liveAddresses(): string[] {
    return this.live().flatMap((member) => (member.address === undefined ? [] : [member.address]));
  }

  /** The last process started as agent `id`. */
  latest(id: string): ClusterMember | undefined {
    return this.#members.findLast((member) => member.id === id);
  }

  /**
   * Starts agent `id` on `127.0.0.1:0` without waiting for it; its `address` is set once it says where
   * it listens. Throws when the process cannot be spawned.
   */
  launch(id: string, start: AgentStart = {}): ClusterMember {
    const join = start.join ?? this.liveAddresses();
    const dataDir = start.dataDir ?? this.options.dataDirOf(id);
    const process = UbicrawlProcess.startAgent(
      {
        ...this.options.flags,
        ...start.flags,
        id,
        data: dataDir,
        listen: "127.0.0.1:0",
        ...(join.length === 0 ? {} : { join: [join.join(",")] }),
      },
      { ...this.options.process, ...start.process },
      start.args,
    );
    const member: ClusterMember = { id, dataDir, process };
    this.#members.push(member);
    this.options.onLaunch?.(member);
    process.listening(AGENT_LISTEN_TIMEOUT_MS).then(
      (address) => {
        member.address = address;
      },
      () => undefined, // said by start(), or by whoever waits for it
    );
    return member;
  }

  /** Starts agent `id` (see {@link launch}) and waits until it listens. */
  async start(id: string, start: AgentStart = {}): Promise<ClusterMember & { address: string }> {
    const member = this.launch(id, start);
    const address = await member.process.listening(AGENT_LISTEN_TIMEOUT_MS);
    member.address = address;
    return Object.assign(member, { address });
  }

  /**
   * Waits until each agent at `addresses` sees `count` agents alive (its own view), polling; throws
   * past `deadlineMs` (a `Date.now()` time), naming the agent and what it sees.
   */
  async untilViewsHold(addresses: readonly string[], count: number, deadlineMs: number): Promise<void> {
    for (const address of addresses) {
      await this.call(address, QUESTION_DEADLINE_MS, async (client) => {
        for (;;) {
          const { agents } = await client.operatorStats({ cluster: false });
          const alive = agents[0]?.view.filter((peer) => peer.status === "ALIVE").length ?? 0;
          if (alive >= count) return;
          if (Date.now() > deadlineMs) {
            throw new UbiError(
              ErrorCode.ExperimentFailed,
              `agent at ${address} sees ${alive} of ${count} agents alive`,
            );
          }
          await sleep(VIEW_POLL_MS);
        }
      });
    }
  }

  /** The whole cluster's stats, asked of the first running agent that answers (none: empty). */
  async stats(): Promise<AgentStats[]> {
    for (const address of this.liveAddresses()) {
      try {
        return await this.call(
          address,
          QUESTION_DEADLINE_MS,
          async (client) => (await client.operatorStats({ cluster: true })).agents,
        );
      } catch {
        // the next agent
      }
    }
    return [];
  }

  /** Gives the agent at `address` seeds (`ubicrawl ctl add-seeds`); throws when it refuses them. */
  async addSeeds(address: string, urls: readonly string[]): Promise<void> {
    await this.call(address, CALL_DEADLINE_MS, async (client) => {
      const reply = await client.control({ action: "ADD_SEEDS", argument: "", urls: [...urls] });
      if (!reply.ok) throw new UbiError(ErrorCode.InvalidArgument, `add-seeds refused: ${reply.message}`);
    });
  }

  /** Sends `signal` to every running agent at once (for a process that is exiting and cannot wait). */
  killAll(signal: NodeJS.Signals = "SIGKILL"): void {
    for (const member of this.#members) member.process.kill(signal);
  }

  /** Stops every running agent (SIGTERM, then SIGKILL), waiting for them. */
  async stopAll(): Promise<void> {
    await Promise.all(this.#members.map((member) => member.process.stop()));
  }

  /** Resolves once every agent process started so far has exited. */
  exits(): Promise<ExitResult[]> {
    return Promise.all(this.#members.map((member) => member.process.exit));
  }

  private async call<T>(
    address: string,
    deadlineMs: number,
    ask: (client: PeerClient) => Promise<T>,
  ): Promise<T> {
    const client = new PeerClient(address, {
      security: this.options.security ?? INSECURE,
      requestDeadlineMs: deadlineMs,
    });
    try {
      return await ask(client);
    } finally {
      client.close();
    }
  }
}
