import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Agent } from "../agent/agent.js";
import { AGENT_DEFAULTS, type AgentOptions, validateAgentOptions } from "../agent/agent-options.js";
import { ProgressReporter, summaryLines } from "../agent/progress.js";
import { systemClock } from "../clock.js";
import { waitForSeeds } from "../cluster/cluster-join.js";
import {
  ClusterNode,
  type ClusterOptions,
  DEFAULT_JOIN_TIMEOUT_MS,
  DEFAULT_LEAVE_TIMEOUT_MS,
  DEFAULT_RECOVERY_K,
  DEFAULT_TAKEOVER_DELAY_MS,
  loneAgentStats,
  type PartitionStats,
} from "../cluster/index.js";
import {
  AgentConsole,
  type ConsoleServerOptions,
  checkConsoleOptions,
  isLoopbackHost,
  readTokenFile,
} from "../console/index.js";
import { ErrorCode, errorChain, isUbiError, UbiError } from "../errors.js";
import { NetPolicy } from "../fetching/index.js";
import { diagnoseTransport } from "../security/diagnose-tls.js";
import { prepareDataDir } from "../storage/data-dir.js";
import { INSECURE, parseHostPort, type TransportSecurity } from "../transport/index.js";
import { checkTlsMaterial } from "../transport/security.js";
import { formatConfig, parseFlagsWithConfig } from "./config-file.js";
import { nothingFetched, startNotice } from "./crawl-outcome.js";
import { type FlagSpecs, formatHelp, type ParsedFlags } from "./flags.js";
import { acceptSeeds, readSeeds } from "./seeds.js";

/** Flags of `ubicrawl agent`. Their names are a contract other tools rely on. */
export const AGENT_FLAGS = {
  id: { type: "string", help: "unique id of this agent (letters, digits, . _ -)", placeholder: "ID" },
  data: {
    type: "string",
    help: "this agent's folder of durable state, WARC files and crawl log (a new folder starts a new crawl)",
    placeholder: "DIR",
  },
  seeds: {
    type: "strings",
    help: "seed http(s) URLs, or files with one URL a line",
    placeholder: "FILE|URL...",
  },
  "hosts-file": {
    type: "string",
    help: "resolve names only with this /etc/hosts-format file (names missing fail at once, no DNS)",
    placeholder: "FILE",
  },
  "allow-net": {
    type: "strings",
    help: "allow this private/loopback/link-local CIDR (refused by default)",
    placeholder: "CIDR",
  },
  "delay-ms": {
    type: "integer",
    help: "delay between requests to one host",
    default: AGENT_DEFAULTS.delayMs,
    min: 0,
  },
  "max-active-hosts": {
    type: "integer",
    help: "hosts visited at once (one worker each)",
    default: AGENT_DEFAULTS.maxActiveHosts,
    min: 1,
  },
  "max-per-ip": {
    type: "integer",
    help: "requests in flight to one IP address at most",
    default: AGENT_DEFAULTS.maxPerIp,
    min: 1,
  },
  "max-pages-per-host": {
    type: "integer",
    help: "fetches per host at most (against traps)",
    default: AGENT_DEFAULTS.maxPagesPerHost,
    min: 1,
  },
  "max-depth": {
    type: "integer",
    help: "per-host link depth at most (against traps)",
    default: AGENT_DEFAULTS.maxDepth,
    min: 0,
  },
  "user-agent": {
    type: "string",
    help: "User-Agent header",
    default: AGENT_DEFAULTS.userAgent,
    placeholder: "UA",
  },
  scope: {
    type: "strings",
    help: "crawl only hosts equal to or under this domain (none: broad crawl)",
    placeholder: "DOMAIN",
  },
  "exit-when-done": {
    type: "boolean",
    help: "stop when the crawl is complete and print a summary; exit 1 when every URL tried failed",
  },
  "robots-retry-ms": {
    type: "integer",
    help: "wait before asking again for an unavailable robots.txt",
    default: AGENT_DEFAULTS.robotsRetryMs,
    min: 0,
  },
  "max-robots-attempts": {
    type: "integer",
    help: "attempts at an unavailable robots.txt before the host is given up",
    default: AGENT_DEFAULTS.maxRobotsAttempts,
    min: 1,
  },
  "max-fetch-attempts": {
    type: "integer",
    help: "attempts at a URL whose server refused, dropped or did not answer the connection",
    default: AGENT_DEFAULTS.maxFetchAttempts,
    min: 1,
  },
  "fetch-retry-ms": {
    type: "integer",
    help: "wait before retrying such a fetch (doubling at each further retry)",
    default: AGENT_DEFAULTS.fetchRetryMs,
    min: 0,
  },
  "max-body-bytes": {
    type: "integer",
    help: "body size cap per fetch",
    default: AGENT_DEFAULTS.maxBodyBytes,
    min: 1024,
  },
  "fetch-timeout-ms": {
    type: "integer",
    help: "whole-fetch deadline",
    default: AGENT_DEFAULTS.fetchTimeoutMs,
    min: 100,
  },
  listen: {
    type: "string",
    help: "join a cluster: serve agent-to-agent gRPC on this address (port 0 picks one)",
    placeholder: "HOST:PORT",
  },
  advertise: {
    type: "string",
    help: "address other agents reach this one at, e.g. behind NAT or a proxy (default: the bound --listen)",
    placeholder: "HOST:PORT",
  },
  join: {
    type: "strings",
    help: "addresses of live agents to join through (comma-separated or repeated; one is enough)",
    placeholder: "HOST:PORT",
  },
  capacity: {
    type: "integer",
    help: "this agent's capacity: its share of hosts is proportional to it",
    default: 1,
    min: 1,
    max: 1000,
  },
  "heartbeat-ms": {
    type: "integer",
    help: "heartbeat interval of the failure detector",
    default: 1000,
    min: 10,
  },
  "suspect-after-ms": {
    type: "integer",
    help: "an agent silent this long is suspected dead",
    default: 5000,
    min: 20,
  },
  "recovery-k": {
    type: "integer",
    help: "agents asked at most, along the circle, for a host this agent now owns (its previous owners hand it over with the pages done there) before taking one none of them holds; 0 takes hosts without asking",
    default: DEFAULT_RECOVERY_K,
    min: 0,
    max: 1000,
  },
  "takeover-delay-ms": {
    type: "integer",
    help: "how long a crashed agent's hosts wait for it to come back before others crawl them",
    default: DEFAULT_TAKEOVER_DELAY_MS,
    min: 0,
  },
  "on-stop": {
    type: "string",
    help: "what SIGTERM/SIGINT does in a cluster: leave (hand every host and queued URL to its next owner, then exit) or hold (stop; the others hold this agent's hosts for --takeover-delay-ms, for a restart)",
    default: "leave",
  },
  "leave-timeout-ms": {
    type: "integer",
    help: "longest a graceful leave may take before the agent stops anyway",
    default: DEFAULT_LEAVE_TIMEOUT_MS,
    min: 100,
  },
  "join-timeout-ms": {
    type: "integer",
    help: "how long to keep trying --join addresses that do not answer (a TLS/plaintext mismatch or a refused certificate fails at once)",
    default: DEFAULT_JOIN_TIMEOUT_MS,
    min: 100,
  },
  insecure: { type: "boolean", help: "plaintext agent-to-agent traffic (loopback demos and tests only)" },
  "tls-ca": {
    type: "string",
    help: "PEM of the cluster CA (mutual TLS between agents)",
    placeholder: "FILE",
  },
  "tls-cert": { type: "string", help: "PEM certificate of this agent", placeholder: "FILE" },
  "tls-key": { type: "string", help: "PEM private key of this agent", placeholder: "FILE" },
  http: {
    type: "string",
    help: "serve the read-only console on this address: a live dashboard at /, /metrics (Prometheus), /api/stats, /healthz, /readyz (a non-loopback address needs --http-token-file, or the cluster's --tls-* for HTTPS with operator certificates)",
    placeholder: "HOST:PORT",
  },
  "http-token-file": {
    type: "string",
    help: "file whose first line is a bearer token (16+ characters) the console then requires, but for /healthz and /readyz",
    placeholder: "FILE",
  },
  config: {
    type: "string",
    help: "read flags from this YAML or JSON file (keys are the flags' names: delay-ms: 500); flags given here win",
    placeholder: "FILE",
  },
  "print-config": {
    type: "boolean",
    help: "print the effective configuration (file, flags and defaults) as YAML and exit",
  },
  progress: {
    type: "string",
    help: "progress output: auto (a live line on a terminal, log lines otherwise), line, log or off",
    default: "auto",
  },
} as const satisfies FlagSpecs;

const USAGE =
  "ubicrawl agent --id ID --data DIR [--seeds FILE|URL...] [--listen HOST:PORT [--join HOST:PORT,...]] [--config FILE] [flags]";
const DESCRIPTION = `Runs one crawler agent. Alone, it owns every host. It visits hosts breadth-first, one worker
per host, politely, obeying robots.txt; it writes WARC files and a crawl log under --data, and resumes
from there after a restart (even after SIGKILL). It runs until SIGINT/SIGTERM, or with
--exit-when-done until the crawl is complete.

In a cluster, SIGTERM or SIGINT is a graceful leave (--on-stop leave, the default): the agent stops
fetching, hands every host it crawled (with the pages it fetched there) and every queued URL to their
next owners, tells the others and exits 0, within --leave-timeout-ms; a second signal stops at once.
Use it to scale down for good. --on-stop hold keeps today's stop for rolling restarts: the agent just
stops, and the others hold its hosts for --takeover-delay-ms so that, restarted on the same --data by
then, it takes them back untouched.

With --listen it is one agent of a decentralized cluster: it joins through --join (any live agent),
owns the hosts that identifier-seeded consistent hashing gives it, sends links of other agents' hosts
to them over gRPC, and takes over the hosts of agents that die. Behind NAT, a container or a proxy,
--advertise names the address the others are told to reach it at. Agent-to-agent traffic uses mutual
TLS (--tls-ca, --tls-cert, --tls-key), or plaintext with --insecure.

A URL is tried once per data dir: rerun on the same --data, a crawl resumes what is queued, and says
so when its seeds were all done before (to crawl them again, give a new --data folder). Exit codes: 0
done or stopped, 1 an error (the message says what to do), 2 a bad flag.`;

/** `ubicrawl agent`: runs an agent until done or signalled. */
export async function agentCommand(argv: string[]): Promise<number> {
  const flags = await parseFlagsWithConfig(argv, AGENT_FLAGS);
  if (flags.help) {
    process.stdout.write(formatHelp(USAGE, DESCRIPTION, AGENT_FLAGS));
    return 0;
  }
  if (flags.positionals.length > 0) throw bad(`unexpected argument "${flags.positionals[0]}"`);
  if (flags.id === undefined) throw bad("--id is required");
  if (flags.data === undefined) throw bad("--data is required");
  if (flags["on-stop"] !== "leave" && flags["on-stop"] !== "hold") {
    throw bad(`--on-stop must be leave or hold, got "${flags["on-stop"]}"`);
  }
  const progress = flags.progress;
  if (progress !== "auto" && progress !== "line" && progress !== "log" && progress !== "off") {
    throw bad(`--progress must be auto, line, log or off, got "${progress}"`);
  }
  const log = (line: string) => process.stderr.write(`ubicrawl agent ${flags.id}: ${line}\n`);
  const seeds = acceptSeeds(await readSeeds(flags.seeds), flags.seeds, log);
  const options: AgentOptions = {
    id: flags.id,
    dataDir: flags.data,
    seeds,
    ...(flags["hosts-file"] === undefined ? {} : { hostsFile: flags["hosts-file"] }),
    allowNet: flags["allow-net"],
    delayMs: flags["delay-ms"],
    maxActiveHosts: flags["max-active-hosts"],
    maxPerIp: flags["max-per-ip"],
    maxPagesPerHost: flags["max-pages-per-host"],
    maxDepth: flags["max-depth"],
    userAgent: flags["user-agent"],
    scopes: flags.scope.map((scope) => scope.toLowerCase()),
    exitWhenDone: flags["exit-when-done"],
    maxRobotsAttempts: flags["max-robots-attempts"],
    robotsRetryMs: flags["robots-retry-ms"],
    maxFetchAttempts: flags["max-fetch-attempts"],
    fetchRetryMs: flags["fetch-retry-ms"],
    maxBodyBytes: flags["max-body-bytes"],
    fetchTimeoutMs: flags["fetch-timeout-ms"],
    progress,
  };
  // Every flag is checked before anything is created (--data included) or bound.
  const cluster = await clusterOptions(flags);
  validateAgentOptions(options);
  new NetPolicy({ allow: options.allowNet });
  const consoleSettings = await consoleOptions(flags, cluster?.security);
  if (flags["print-config"]) {
    process.stdout.write(formatConfig(flags, AGENT_FLAGS));
    return 0;
  }
  // Up before the join, so /healthz answers (and /readyz says "starting") while it is waited for.
  const console = consoleSettings && (await startConsole(consoleSettings, options.id, log));
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
      node = await startNode(options, cluster, log);
      agent = node.agent;
      const advertised = node.address === node.listenAddress ? "" : ` (advertised as ${node.address})`;
      log(`listening on ${node.listenAddress}${advertised}`);
    } else {
      agent = await Agent.open(options);
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
        ? { stats: () => clusterNode.stats(), clusterStats: () => clusterNode.clusterStats() }
        : {
            stats: () => (lone as PartitionStats).stats(),
            clusterStats: async () => [(lone as PartitionStats).stats()],
          },
    );
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
    if (notice !== undefined) log(notice);
  }
  const reporter = new ProgressReporter(agent, process.stderr, progress);
  const finished = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("interrupted"));
    process.once("SIGTERM", () => resolve("terminated"));
    if (options.exitWhenDone) {
      const untilDone = async () => {
        // In a cluster, stop taking URL batches, then make sure none slipped in since the decision.
        do await agent.whenDone();
        while (node && !node.sealIntake());
        resolve("done");
      };
      untilDone().catch(() => resolve("failed"));
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
    } else if (flags["on-stop"] === "leave") {
      await leaveGracefully(node, flags["leave-timeout-ms"]);
    }
    await node.stop();
  } else {
    await agent.stop();
  }
  await console?.stop();
  for (const line of summaryLines(agent, reason)) process.stderr.write(`${line}\n`);
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
async function leaveGracefully(node: ClusterNode, timeoutMs: number): Promise<void> {
  const log = (line: string) => process.stderr.write(`ubicrawl agent ${node.agent.id}: ${line}\n`);
  log(
    `leaving the cluster: handing hosts and queued URLs to their next owners (at most ${timeoutMs} ms; a second signal stops at once)`,
  );
  const forced = new Promise<"forced">((resolve) => {
    process.once("SIGINT", () => resolve("forced"));
    process.once("SIGTERM", () => resolve("forced"));
  });
  const outcome = await Promise.race([node.leave(timeoutMs), forced]);
  if (outcome === "forced") {
    log(
      "stopped before the leave was complete: the others take what was not handed over as a crashed agent's",
    );
    return;
  }
  const missing = outcome.hostsNotHanded + outcome.urlsNotHanded;
  log(
    `left: ${outcome.hostsHanded} hosts handed over` +
      (missing === 0
        ? ""
        : `; not in time: ${outcome.hostsNotHanded} hosts (their next owners crawl them without this agent's record of them), ${outcome.urlsNotHanded} queued URLs (kept in its data dir: restart this agent on it to hand them over)`),
  );
}

/**
 * The console's options from `--http` and `--http-token-file`, checked (nothing bound yet), or
 * undefined without `--http`. On loopback it is plain HTTP; elsewhere it is HTTPS with the cluster's
 * mutual TLS (operator certificates only) when the agent has it, and needs a bearer token otherwise.
 */
async function consoleOptions(
  flags: ParsedFlags<typeof AGENT_FLAGS>,
  security: TransportSecurity | undefined,
): Promise<ConsoleServerOptions | undefined> {
  if (flags.http === undefined) {
    if (flags["http-token-file"] !== undefined) throw bad("--http-token-file needs --http");
    return undefined;
  }
  const address = parseHostPort(flags.http, true);
  if (address === undefined) throw bad(`--http must be HOST:PORT, got "${flags.http}"`);
  const token =
    flags["http-token-file"] === undefined ? undefined : await readTokenFile(flags["http-token-file"]);
  const tls = security?.kind === "tls" && !isLoopbackHost(address.host) ? security : undefined;
  const options: ConsoleServerOptions = {
    listen: flags.http,
    ...(token === undefined ? {} : { token }),
    ...(tls === undefined ? {} : { tls: { caPem: tls.caPem, certPem: tls.certPem, keyPem: tls.keyPem } }),
  };
  checkConsoleOptions(options);
  return options;
}

/** Starts the console (`--http`), saying where. */
async function startConsole(
  options: ConsoleServerOptions,
  agentId: string,
  log: (line: string) => void,
): Promise<AgentConsole> {
  const console = await AgentConsole.start(options, {
    agentId,
    clock: systemClock,
    onError: (error) => log(`console: ${errorChain(error)}`),
  });
  log(`console on ${options.tls ? "https" : "http"}://${console.address}/`);
  return console;
}

/** The cluster options from the flags, or undefined for a lone agent (no --listen). */
async function clusterOptions(flags: ParsedFlags<typeof AGENT_FLAGS>): Promise<ClusterOptions | undefined> {
  const join = flags.join.flatMap((value) => value.split(",")).filter((value) => value !== "");
  if (flags.listen === undefined) {
    if (join.length > 0) throw bad("--join needs --listen (the address other agents reach this one at)");
    if (flags.advertise !== undefined) throw bad("--advertise needs --listen");
    return undefined;
  }
  if (parseHostPort(flags.listen, true) === undefined) {
    throw bad(`--listen must be HOST:PORT (port 0 picks one), got "${flags.listen}"`);
  }
  if (flags.advertise !== undefined && parseHostPort(flags.advertise) === undefined) {
    throw bad(`--advertise must be HOST:PORT, got "${flags.advertise}"`);
  }
  for (const address of join) {
    if (parseHostPort(address) === undefined) throw bad(`--join: "${address}" is not HOST:PORT`);
  }
  const tlsFlags = [flags["tls-ca"], flags["tls-cert"], flags["tls-key"]];
  let security: TransportSecurity;
  if (tlsFlags.every((value) => value !== undefined)) {
    if (flags.insecure) throw bad("--insecure and --tls-* exclude each other");
    const [caPem, certPem, keyPem] = await Promise.all(tlsFlags.map((path) => readText(path as string)));
    security = { kind: "tls", caPem: caPem as string, certPem: certPem as string, keyPem: keyPem as string };
    checkTlsMaterial(security, {
      ca: `--tls-ca ${flags["tls-ca"]}`,
      cert: `--tls-cert ${flags["tls-cert"]}`,
      key: `--tls-key ${flags["tls-key"]}`,
    });
  } else if (tlsFlags.some((value) => value !== undefined)) {
    throw bad("mutual TLS needs all three of --tls-ca, --tls-cert and --tls-key");
  } else if (flags.insecure) {
    security = INSECURE;
  } else {
    throw bad("agent-to-agent traffic needs --tls-ca/--tls-cert/--tls-key, or --insecure for plaintext");
  }
  if (flags["suspect-after-ms"] <= flags["heartbeat-ms"]) {
    throw bad("--suspect-after-ms must be larger than --heartbeat-ms");
  }
  return {
    listen: flags.listen,
    ...(flags.advertise === undefined ? {} : { advertise: flags.advertise }),
    join,
    capacity: flags.capacity,
    heartbeatIntervalMs: flags["heartbeat-ms"],
    suspectAfterMs: flags["suspect-after-ms"],
    recoveryK: flags["recovery-k"],
    takeoverDelayMs: flags["takeover-delay-ms"],
    joinTimeoutMs: flags["join-timeout-ms"],
    security,
  };
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw bad(`cannot read ${path}: ${(error as Error).message}`);
  }
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}

/** The join's own time at least, after the seeds answered a probe (a seed may still be starting). */
const MIN_JOIN_AFTER_PROBE_MS = 5000;

/**
 * Starts the cluster node. Before, waits for a --join address to answer the way this agent talks
 * (failing at once on a refusal that cannot pass: TLS against plaintext, another CA); when the join
 * fails later all the same, asks the seeds why (gRPC hides TLS handshake errors behind "unavailable").
 */
async function startNode(
  options: AgentOptions,
  cluster: ClusterOptions,
  log: (line: string) => void,
): Promise<ClusterNode> {
  const { security } = cluster;
  const self = new Set([cluster.listen, ...(cluster.advertise === undefined ? [] : [cluster.advertise])]);
  const seeds = cluster.join.filter((seed) => !self.has(seed));
  const timeoutMs = cluster.joinTimeoutMs ?? DEFAULT_JOIN_TIMEOUT_MS;
  let joinTimeoutMs = timeoutMs;
  if (seeds.length > 0) {
    // The clock's timers are unref'd: nothing else holds the process while it waits for a seed.
    const keepAlive = setInterval(() => {}, 60_000);
    try {
      const leftMs = await waitForSeeds({
        seeds,
        timeoutMs,
        probe: (address) => diagnoseTransport(address, security),
        log,
        clock: systemClock,
      });
      // What is left of the timeout, but time enough for the join itself.
      joinTimeoutMs = Math.max(leftMs, Math.min(timeoutMs, MIN_JOIN_AFTER_PROBE_MS));
    } finally {
      clearInterval(keepAlive);
    }
  }
  try {
    return await ClusterNode.start(options, { ...cluster, joinTimeoutMs });
  } catch (error) {
    if (!isUbiError(error, ErrorCode.PeerUnreachable)) throw error;
    const reasons: string[] = [];
    for (const address of seeds) {
      const diagnosis = await diagnoseTransport(address, security);
      if (!diagnosis.ok) reasons.push(diagnosis.message);
    }
    if (reasons.length === 0) throw error;
    throw new UbiError(ErrorCode.PeerUnreachable, `${error.message}; ${reasons.join("; ")}`, {
      cause: error,
    });
  }
}
