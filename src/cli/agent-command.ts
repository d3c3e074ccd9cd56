import { join } from "node:path";
import { Agent } from "../agent/agent.js";
import type { AgentOptions } from "../agent/agent-options.js";
import { crawlSummary, ProgressReporter } from "../agent/progress.js";
import { systemClock } from "../clock.js";
import {
  type ChosenSeeds,
  ClusterNode,
  type ClusterOptions,
  chooseSeeds,
  DEFAULT_JOIN_TIMEOUT_MS,
  leaveReport,
  loneAgentStats,
  type PartitionStats,
  readKnownPeers,
  SeedAddresses,
  selfAddressMatcher,
} from "../cluster/index.js";
import { AgentConsole, type ConsoleServerOptions } from "../console/index.js";
import { ErrorCode, errorChain, isUbiError, UbiError } from "../errors.js";
import { HostsFileResolver, lookupAllAddresses } from "../fetching/index.js";
import { AGENT_DESCRIPTION, AGENT_FLAGS, AGENT_USAGE, formatHelp } from "../flags/index.js";
import { createLogger, type Logger } from "../logging/index.js";
import { diagnoseTransport } from "../security/diagnose-tls.js";
import { prepareDataDir } from "../storage/data-dir.js";
import { corruptStateError, isCorruption } from "../storage/index.js";
import { type AgentSettings, agentSettings, loggingSettings } from "./agent-settings.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";
import { formatConfig, parseFlagsWithConfig } from "./config-file.js";
import { endWaitNotice, nothingFetched, startNotice } from "./crawl-outcome.js";

/**
 * `ubicrawl agent`: runs an agent until done or signalled. A bad flag throws (the CLI says why in one
 * line, exit 2); anything that fails once the logger exists is logged as a `fatal` record (exit 1).
 * `--help` and `--print-config` print on `io.stdout`; the log records and the progress go to `io.stderr`.
 */
export async function agentCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = await parseFlagsWithConfig(argv, AGENT_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(AGENT_USAGE, AGENT_DESCRIPTION, AGENT_FLAGS));
    return 0;
  }
  const logging = loggingSettings(flags);
  const logger = await createLogger({ ...logging, bindings: { agent: flags.id }, destination: io.stderr });
  // Every flag is checked before anything is created (--data included) or bound.
  const settings = await agentSettings(flags, logger);
  if (flags["print-config"]) {
    io.stdout.write(formatConfig(flags, AGENT_FLAGS));
    return 0;
  }
  try {
    return await runAgent(settings, logger, io);
  } catch (thrown) {
    // LevelDB's own "Corruption: …", wherever a read met it: named, with the folder and what to do.
    const { dataDir } = settings.options;
    const error =
      isCorruption(thrown) && !isUbiError(thrown)
        ? corruptStateError(thrown, join(dataDir, "state"), dataDir)
        : thrown;
    if (!isUbiError(error)) throw error;
    // A UbiError says what went wrong and what to do: its stack is noise; what caused it is not.
    const cause = error.cause === undefined ? {} : { cause: errorChain(error.cause) };
    logger.fatal({ event: "failed", code: error.code, ...cause }, error.message);
    return error.code === ErrorCode.InvalidArgument ? 2 : 1;
  }
}

/** Opens (or joins), crawls until done or signalled, stops and logs the summary; progress on `io.stderr`. */
async function runAgent(settings: AgentSettings, logger: Logger, io: CommandIo): Promise<number> {
  const { options, cluster } = settings;
  // Up before the join, so /healthz answers (and /readyz says "starting") while it is waited for.
  const console = settings.console && (await startConsole(settings.console, options.id, logger));
  try {
    // A wrong --data fails before a join is waited for (Agent.open checks it again, harmlessly).
    await prepareDataDir(options.dataDir, options.id);
  } catch (error) {
    await console?.stop();
    throw error;
  }
  let agent: Agent;
  let node: ClusterNode | undefined;
  try {
    if (cluster) {
      node = await startNode(options, cluster, logger);
      agent = node.agent;
      const advertised = node.address === node.listenAddress ? "" : ` (advertised as ${node.address})`;
      logger.info(
        { event: "listening", address: node.listenAddress, advertised: node.address },
        `listening on ${node.listenAddress}${advertised}`,
      );
    } else {
      agent = await Agent.open(options, { logger });
      await agent.start();
    }
  } catch (error) {
    await console?.stop();
    throw isUbiError(error, ErrorCode.DataDirInUse) ? dataDirInUse(options.dataDir, error) : error;
  }
  if (console) {
    const clusterNode = node;
    const lone = clusterNode ? undefined : loneAgentStats(agent, systemClock);
    console.attach(
      agent,
      clusterNode
        ? {
            stats: () => clusterNode.stats(),
            clusterStats: () => clusterNode.clusterStats(),
            clusterPagesFetched: () => clusterNode.clusterPagesFetched(),
          }
        : {
            stats: () => (lone as PartitionStats).stats(),
            clusterStats: async () => [(lone as PartitionStats).stats()],
            clusterPagesFetched: () => (lone as PartitionStats).stats().pagesFetched,
          },
    );
  }
  // Alone (no --listen) and idle from the start, the agent can never get work: nothing calls it.
  const nothingToDo = node === undefined && agent.isIdle;
  if (nothingToDo && (agent.seedRouting?.given ?? 0) === 0 && holdsNoCrawl(agent)) {
    // A forgotten --seeds: a usage error, said before anything else.
    await agent.stop();
    await console?.stop();
    throw noSeeds(options.dataDir);
  }
  if (agent.seedRouting) {
    const notice = startNotice({
      dataDir: options.dataDir,
      routing: agent.seedRouting,
      alone: node === undefined,
      queuedUrls: agent.queuedUrls,
      hostsWithWork: agent.hostsWithWork().length,
      pagesFetched: agent.stats.pagesFetched,
      scopes: options.scopes,
    });
    if (notice !== undefined) logger.info({ event: "start-notice" }, notice);
  }
  const endWait = endWaitNotice(options);
  if (endWait !== undefined) logger.info({ event: "end-wait-notice" }, endWait);
  const reporter = new ProgressReporter(agent, io.stderr, options.progress, logger);
  const finished = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("interrupted"));
    process.once("SIGTERM", () => resolve("terminated"));
    if (nothingToDo) {
      logger.info(
        { event: "nothing-to-do" },
        "stopping: an agent alone (no --listen) with nothing queued can get no work",
      );
    }
    if (options.exitWhenDone || nothingToDo) {
      const untilDone = async () => {
        // In a cluster, stop taking URL batches, then make sure none slipped in since the decision.
        do await agent.whenDone();
        while (node && !node.sealIntake());
        resolve("done");
      };
      untilDone().catch((error: unknown) => {
        logger.error({ event: "crawl-failed", err: error }, "waiting for the end of the crawl failed");
        resolve("failed");
      });
    }
  });
  reporter.start();
  const reason = await finished;
  reporter.stop();
  console?.markStopping();
  if (node) {
    if (reason === "done") {
      // Tell the others this agent left on purpose, so they do not re-send its URLs as if it crashed.
      await node.announceLeave();
    } else if (settings.onStop === "leave") {
      await leaveGracefully(node, settings.leaveTimeoutMs, logger);
    }
    await node.stop();
  } else {
    await agent.stop();
  }
  await console?.stop();
  const summary = crawlSummary(agent, reason);
  logger.info(summary.fields, summary.message);
  if (reason === "done") {
    // A crawl that fetched nothing because everything failed is a failure, with its reasons.
    const failure = nothingFetched({
      id: options.id,
      dataDir: options.dataDir,
      stats: agent.stats,
      routing: agent.seedRouting,
      alone: node === undefined,
      ...(options.hostsFile === undefined ? {} : { hostsFile: options.hostsFile }),
    });
    if (failure) throw failure;
  }
  return 0;
}

/** True when the agent's data dir holds no crawl: no page fetched there and no fetch failed there. */
function holdsNoCrawl(agent: Agent): boolean {
  return agent.stats.pagesFetched === 0 && agent.stats.errors.size === 0;
}

/** The error of a lone agent started with no seeds on a data dir that holds no crawl to resume. */
function noSeeds(dataDir: string): UbiError {
  return new UbiError(
    ErrorCode.InvalidArgument,
    `nothing to crawl: no --seeds, and the data dir ${dataDir} holds no crawl to resume. Give --seeds ` +
      "URL|FILE... to start a crawl (or --listen, with --join, to take part in a cluster's)",
  );
}

/** The `DataDirInUse` error of a data dir whose state store another running agent has open. */
function dataDirInUse(dataDir: string, error: UbiError): UbiError {
  return new UbiError(
    ErrorCode.DataDirInUse,
    `the data dir ${dataDir} is in use by another running agent (the lock ${join(dataDir, "state", "LOCK")} ` +
      "is held): stop that agent first, or give this one its own --data folder",
    { cause: error },
  );
}

/**
 * A signal's graceful leave: hands this agent's hosts and queued URLs to their next owners within
 * `timeoutMs`, saying what it does; a second signal stops at once (the others then hold the hosts that
 * were not handed over, as after a crash).
 */
async function leaveGracefully(node: ClusterNode, timeoutMs: number, logger: Logger): Promise<void> {
  if (node.alive.every((member) => member.id === node.agent.id)) {
    // The last agent: nobody to hand anything to. Its queue stays in its data dir for a restart.
    logger.info(
      { event: "leaving", alone: true },
      `leaving the cluster: no other agent is alive, so the ${node.agent.queuedUrls} queued URLs stay in the data dir (restart this agent on it to go on)`,
    );
    return;
  }
  logger.info(
    { event: "leaving", timeoutMs },
    `leaving the cluster: handing hosts and queued URLs to their next owners (at most ${timeoutMs} ms; a second signal stops at once)`,
  );
  const forced = new Promise<"forced">((resolve) => {
    process.once("SIGINT", () => resolve("forced"));
    process.once("SIGTERM", () => resolve("forced"));
  });
  const outcome = await Promise.race([node.leave(timeoutMs), forced]);
  if (outcome === "forced") {
    logger.warn(
      { event: "leave-cut-short" },
      "stopped before the leave was complete: the others take what was not handed over as a crashed agent's",
    );
    return;
  }
  const report = leaveReport(outcome);
  logger[report.level]({ event: "left", ...outcome }, report.message);
}

/** Starts the console (`--http`), saying where. */
async function startConsole(
  options: ConsoleServerOptions,
  agentId: string,
  logger: Logger,
): Promise<AgentConsole> {
  const log = logger.child({ component: "console" });
  const console = await AgentConsole.start(options, {
    agentId,
    clock: systemClock,
    onError: (error) => log.error({ event: "console-failed", err: error }, "the console failed"),
  });
  const url = `${options.tls ? "https" : "http"}://${console.address}/`;
  logger.info({ event: "console", url }, `console on ${url}`);
  return console;
}

/** The join's own time at least, after the seeds answered a probe (a seed may still be starting). */
const MIN_JOIN_AFTER_PROBE_MS = 5000;

/**
 * Starts the cluster node. Before, waits for a --join address, or an agent the data dir remembers, to
 * answer the way this agent talks (failing at once on a --join address's refusal that cannot pass: TLS
 * against plaintext, another CA) — or, as the first --join address (or with no --join), tries them a
 * few seconds and starts the cluster; when the join fails later all the same, asks the seeds why (gRPC
 * hides TLS handshake errors behind "unavailable").
 */
async function startNode(
  options: AgentOptions,
  cluster: ClusterOptions,
  logger: Logger,
): Promise<ClusterNode> {
  const { security } = cluster;
  const self = new Set([cluster.listen, ...(cluster.advertise === undefined ? [] : [cluster.advertise])]);
  const timeoutMs = cluster.joinTimeoutMs ?? DEFAULT_JOIN_TIMEOUT_MS;
  const remembered = await readKnownPeers(options.dataDir, logger);
  // --join names are resolved here, to each of their addresses, through --hosts-file when given.
  const hosts =
    options.hostsFile === undefined
      ? undefined
      : await HostsFileResolver.fromFile(options.hostsFile, {}, { logger });
  const addresses = new SeedAddresses({
    lookupAll: hosts === undefined ? lookupAllAddresses : (name) => hosts.resolveAll(name),
    isSelf: selfAddressMatcher(cluster.listen, cluster.advertise),
    logger,
  });
  const probeOne = (address: string, serverName?: string) =>
    diagnoseTransport(address, security, undefined, serverName);
  // The clock's timers are unref'd: nothing else holds the process while it waits for a seed.
  const keepAlive = setInterval(() => {}, 60_000);
  let chosen: ChosenSeeds;
  try {
    chosen = await chooseSeeds({
      named: cluster.join.filter((seed) => !self.has(seed)),
      // Only the first --join address starts a cluster: the others wait for it (no split brain).
      founder: cluster.join.length === 0 || self.has(cluster.join[0] as string),
      remembered: remembered.map((peer) => peer.address).filter((address) => !self.has(address)),
      timeoutMs,
      probe: (address) => addresses.probe(address, probeOne),
      logger,
      clock: systemClock,
    });
  } finally {
    clearInterval(keepAlive);
  }
  const seeds = await addresses.expandAll(chosen.seeds);
  if (seeds.length === 0 && chosen.seeds.length > 0) {
    throw new UbiError(
      ErrorCode.PeerUnreachable,
      `cannot join the cluster: ${chosen.seeds.join(", ")} no longer resolve to another agent`,
    );
  }
  // What is left of the timeout, but time enough for the join itself.
  const joinTimeoutMs =
    seeds.length > 0 ? Math.max(chosen.leftMs, Math.min(timeoutMs, MIN_JOIN_AFTER_PROBE_MS)) : timeoutMs;
  const joining = { ...cluster, join: seeds, joinServerNames: addresses.serverNames, joinTimeoutMs };
  try {
    // After `ctl leave`, the process ends as on SIGTERM (the leave done, its handler finds it so).
    return await ClusterNode.start(options, joining, {
      logger,
      afterLeave: () => process.kill(process.pid, "SIGTERM"),
    });
  } catch (error) {
    if (!isUbiError(error, ErrorCode.PeerUnreachable)) throw error;
    const reasons: string[] = [];
    for (const address of seeds) {
      const diagnosis = await probeOne(address, addresses.serverNames.get(address));
      if (!diagnosis.ok) reasons.push(diagnosis.message);
    }
    if (reasons.length === 0) throw error;
    throw new UbiError(ErrorCode.PeerUnreachable, `${error.message}; ${reasons.join("; ")}`, {
      cause: error,
    });
  }
}
