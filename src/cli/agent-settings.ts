import { readFile } from "node:fs/promises";
import { type AgentOptions, validateAgentOptions } from "../agent/agent-options.js";
import type { ClusterOptions } from "../cluster/index.js";
import {
  type ConsoleServerOptions,
  checkConsoleOptions,
  isLoopbackHost,
  readTokenFile,
} from "../console/index.js";
import { ErrorCode, UbiError } from "../errors.js";
import { NetPolicy, readCaFiles, trustedCertificates } from "../fetching/index.js";
import type { AGENT_FLAGS, ParsedFlags } from "../flags/index.js";
import type { LogFormat, Logger, LogLevel } from "../logging/index.js";
import { INSECURE, parseHostPort, type TransportSecurity } from "../transport/index.js";
import { checkTlsMaterial } from "../transport/security.js";
import { acceptSeeds, readSeeds } from "./seeds.js";

/** The parsed flags of `ubicrawl agent`. */
export type AgentFlags = ParsedFlags<typeof AGENT_FLAGS>;

/** What `ubicrawl agent` runs, from its flags, every one checked. */
export interface AgentSettings {
  readonly options: AgentOptions;
  /** The cluster to join, or undefined for a lone agent (no `--listen`). */
  readonly cluster: ClusterOptions | undefined;
  /** The console to serve, or undefined without `--http`. */
  readonly console: ConsoleServerOptions | undefined;
  /** What SIGTERM/SIGINT does in a cluster. */
  readonly onStop: "leave" | "hold";
  readonly leaveTimeoutMs: number;
}

/** `--log-level` and `--log-format` (their values checked by the flag parser against their choices). */
export function loggingSettings(flags: AgentFlags): { level: LogLevel; format: LogFormat } {
  return { level: flags["log-level"], format: flags["log-format"] };
}

/**
 * Every other flag, checked before anything is created (`--data` included) or bound; seeds that are
 * not URLs are skipped with a warning on `logger`.
 */
export async function agentSettings(flags: AgentFlags, logger: Logger): Promise<AgentSettings> {
  if (flags.positionals.length > 0) throw bad(`unexpected argument "${flags.positionals[0]}"`);
  if (flags.id === undefined) throw bad("--id is required");
  if (flags.data === undefined) throw bad("--data is required");
  const onStop = flags["on-stop"];
  const progress = flags.progress;
  const seeds = acceptSeeds(await readSeeds(flags.seeds), flags.seeds, (line) =>
    logger.warn({ event: "seeds-skipped" }, line),
  );
  const replicated = flags["replicated-urls"];
  const replicatedUrls =
    replicated === undefined
      ? []
      : acceptSeeds(
          await readSeeds([replicated], "--replicated-urls"),
          [replicated],
          (line) => logger.warn({ event: "replicated-urls-skipped" }, line),
          "--replicated-urls",
        );
  const trusted = await trustedCertificates(await readCaFiles(flags["ca-file"]), process.env);
  const options: AgentOptions = {
    id: flags.id,
    dataDir: flags.data,
    ...(flags["warc-dir"] === undefined ? {} : { warcDir: flags["warc-dir"] }),
    ...(flags["on-warc-closed"] === undefined ? {} : { onWarcClosed: flags["on-warc-closed"] }),
    seeds,
    replicatedUrls,
    ...(flags["hosts-file"] === undefined ? {} : { hostsFile: flags["hosts-file"] }),
    allowNet: flags["allow-net"],
    delayMs: flags["delay-ms"],
    delayFactor: flags["delay-factor"],
    maxCrawlDelaySeconds: flags["max-crawl-delay"],
    crawlDelayPolicy: flags["crawl-delay-policy"],
    maxActiveHosts: flags["max-active-hosts"],
    maxPerIp: flags["max-per-ip"],
    ...(flags["ip-delay-ms"] === undefined ? {} : { ipDelayMs: flags["ip-delay-ms"] }),
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
    scrubIntervalMs: flags["scrub-interval-ms"],
    minBytesPerSecond: flags["min-bytes-per-s"],
    minRateWindowMs: flags["min-rate-window-ms"],
    sitemaps: flags.sitemaps,
    dedup: flags.dedup,
    linkMode: flags.mode,
    ...(flags["max-bandwidth"] === undefined ? {} : { maxBytesPerSecond: flags["max-bandwidth"] }),
    bandwidthSearchDepth: flags["bandwidth-search-depth"],
    bandwidthControl: flags["bandwidth-control"],
    warcCompression: flags["warc-compression"],
    http2: flags.http2,
    progress,
    ...(trusted === undefined ? {} : { trustedCaPems: trusted }),
    ...(flags.recrawl === "off"
      ? {}
      : {
          recrawl: {
            mode: flags.recrawl,
            intervalMs: flags["recrawl-interval"],
            minMs: flags["recrawl-min"],
            maxMs: flags["recrawl-max"],
            budget: flags["recrawl-budget"],
            ...(flags["recrawl-horizon"] === undefined ? {} : { horizonMs: flags["recrawl-horizon"] }),
            ...(flags["recrawl-until"] === undefined ? {} : { untilMs: flags["recrawl-until"] }),
          },
        }),
  };
  const cluster = await clusterOptions(flags);
  validateAgentOptions(options);
  new NetPolicy({ allow: options.allowNet });
  const console = await consoleOptions(flags, cluster?.security);
  return { options, cluster, console, onStop, leaveTimeoutMs: flags["leave-timeout-ms"] };
}

/**
 * The console's options from `--http` and `--http-token-file`, checked (nothing bound yet), or
 * undefined without `--http`. On loopback it is plain HTTP; elsewhere it is HTTPS with the cluster's
 * mutual TLS (operator certificates only) when the agent has it, and needs a bearer token otherwise.
 */
async function consoleOptions(
  flags: AgentFlags,
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

/** The cluster options from the flags, or undefined for a lone agent (no --listen). */
async function clusterOptions(flags: AgentFlags): Promise<ClusterOptions | undefined> {
  const join = flags.join.flatMap((value) => value.split(",")).filter((value) => value !== "");
  if (flags.listen === undefined) {
    if (join.length > 0) throw bad("--join needs --listen (the address other agents reach this one at)");
    if (flags.advertise !== undefined) throw bad("--advertise needs --listen");
    if (flags.partition === "url")
      throw bad("--partition url needs --listen: it spreads URLs over a cluster's agents");
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
  if (flags.partition === "url" && flags.mode === "cross") {
    throw bad("--mode cross crosses into other agents' hosts: it has no meaning with --partition url");
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
    batchUrls: flags["batch-urls"],
    partitioning: flags.partition,
    ipLimit: flags["ip-limit"],
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
