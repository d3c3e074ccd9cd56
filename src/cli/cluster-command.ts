import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_DEFAULTS } from "../agent/agent-options.js";
import { ErrorCode, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import {
  AGENT_LISTEN_TIMEOUT_MS,
  AgentCluster,
  type AgentFlagValues,
  testWebAgentFlags,
} from "../launch/index.js";
import type { LogRecord } from "../logging/index.js";
import { CRAWL_LOG_FILE, formatReport, measureAgentDirs } from "../report/index.js";
import { CA_CERT_FILE, createClusterCertificates, loadMutualTls } from "../security/index.js";
import { computeTruth, type RunningTestWeb, startTestWeb } from "../testweb/index.js";
import { INSECURE, type TransportSecurity } from "../transport/index.js";
import { type CommandIo, PROCESS_IO, type TextOutput } from "./command-io.js";
import { formatStats } from "./stats-command.js";

const CLUSTER_FLAGS = {
  agents: { type: "integer", help: "agents to start (separate processes)", default: 3, min: 1, max: 64 },
  hosts: { type: "integer", help: "hosts of the test web", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 20_000, min: 10, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1, min: 0 },
  "delay-ms": { type: "integer", help: "per-host politeness delay of the agents", default: 0, min: 0 },
  "max-active-hosts": { type: "integer", help: "hosts each agent visits at once", default: 64, min: 1 },
  data: {
    type: "string",
    help: "folder for the agents' data (default: a new temp folder); a folder of an earlier run resumes its crawl, on the same test web and port",
    placeholder: "DIR",
  },
  "kill-at": {
    type: "integer",
    help: "SIGKILL one agent when this % of the truth is fetched (scripted fault)",
    min: 1,
    max: 99,
    placeholder: "PCT",
  },
  "add-at": {
    type: "integer",
    help: "start one more agent when this % of the truth is fetched",
    min: 1,
    max: 99,
    placeholder: "PCT",
  },
  "heartbeat-ms": {
    type: "integer",
    help: "failure detector heartbeat of the agents",
    default: 500,
    min: 10,
  },
  "suspect-after-ms": {
    type: "integer",
    help: "failure detector timeout of the agents",
    default: 2500,
    min: 20,
  },
  "takeover-delay-ms": {
    type: "integer",
    help: "how long a killed agent's hosts wait for its restart (key r) before the others crawl them",
    default: 5000,
    min: 0,
  },
  insecure: {
    type: "boolean",
    help: "plaintext agent-to-agent traffic instead of mutual TLS with certificates made in the data folder",
  },
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl cluster [--agents N] [--hosts N] [--pages N] [flags]";
const DESCRIPTION = `Starts the built-in test web on loopback and N agents as separate processes that find each
other, split the web by consistent hashing and crawl it; shows combined progress, and at the end the
coverage and overlap measured against the test web's ground truth.

Keys while it runs (on a terminal): k = SIGKILL a random agent, a = add an agent, r = restart the last
killed agent, s = print the cluster's stats, q = stop everything. --kill-at/--add-at script the same.

Each agent serves its console on loopback (ubicrawl agent --http): open the address it prints for a
live dashboard of the cluster. Agents talk over mutual TLS: a CA and a certificate per agent are made
under DIR/certs (see 'ubicrawl certs'); the operator certificate there works with 'ubicrawl stats' and
'ubicrawl ctl'. --insecure uses plaintext.`;

const PROGRESS_INTERVAL_MS = 1000;

/** An agent's record as a note: its message, and the error code of a failure. */
function describeAgentRecord(record: LogRecord): string {
  return record.err?.code === undefined ? record.msg : `${record.msg} [${record.err.code}]`;
}

/**
 * `ubicrawl cluster`: a whole cluster on this machine, crawling the test web, watched and steered;
 * `--help` on `io.stdout`, the progress, the agents' notes and the report on `io.stderr`.
 */
export async function clusterCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, CLUSTER_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, CLUSTER_FLAGS));
    return 0;
  }
  if (flags["suspect-after-ms"] <= flags["heartbeat-ms"]) {
    throw new UbiError(ErrorCode.InvalidArgument, "--suspect-after-ms must be larger than --heartbeat-ms");
  }
  const dir = flags.data ?? (await mkdtemp(join(tmpdir(), "ubicrawl-cluster-")));
  await mkdir(dir, { recursive: true });
  const web = await testWebFor(dir, { seed: flags.seed, hosts: flags.hosts, pages: flags.pages }, io.stderr);
  const security = flags.insecure ? INSECURE : await operatorSecurity(certsDirOf(dir));
  const cluster = new LocalCluster(dir, web, flags, security, io.stderr);
  // Interrupted: stop the agents this command started (SIGTERM, then SIGKILL), then exit.
  const onSignal = () => {
    cluster
      .shutdown()
      .finally(() => web.stop())
      .finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // Ended any other way (a crash, a closed output pipe): the agents must not outlive the command.
  const onExit = () => cluster.killAll();
  process.once("exit", onExit);
  try {
    return await cluster.run();
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("exit", onExit);
    await cluster.shutdown();
    await web.stop();
  }
}

/** The test web a data folder's crawl is of: what `ubicrawl cluster` needs to resume it there. */
interface WebRecord {
  readonly seed: number;
  readonly hosts: number;
  readonly pages: number;
  /** The port every host listened on: the agents' queued URLs name it. */
  readonly port: number;
}

/** The file of {@link WebRecord} in the data folder. */
const WEB_RECORD_FILE = "testweb.json";

/**
 * Serves the test web of the crawl in `dir`: a new one (recorded there) for a new folder; for a folder
 * of an earlier run, the same web on the same port, so the agents resume where they stopped. Refuses,
 * saying why and what to do, a folder of another web, of a run that did not record its web, or whose
 * port is taken now. A resumed crawl is told on `stderr`.
 */
async function testWebFor(
  dir: string,
  web: Omit<WebRecord, "port">,
  stderr: TextOutput,
): Promise<RunningTestWeb> {
  const recordPath = join(dir, WEB_RECORD_FILE);
  let saved: WebRecord | undefined;
  try {
    saved = JSON.parse(await readFile(recordPath, "utf8")) as WebRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw refuse(`cannot read ${recordPath} (${(error as Error).message}): use a new --data folder`);
    }
  }
  if (saved === undefined) {
    const entries = await readdir(dir);
    if (entries.some((name) => /^agent-\d+$/.test(name))) {
      throw refuse(
        `${dir} holds agents' data of an earlier run that did not record its test web (the port its queued URLs point at): use a new --data folder`,
      );
    }
    const started = await startTestWeb(web);
    await writeFile(recordPath, `${JSON.stringify({ ...web, port: started.port })}\n`);
    return started;
  }
  if (saved.seed !== web.seed || saved.hosts !== web.hosts || saved.pages !== web.pages) {
    throw refuse(
      `${dir} holds a crawl of another test web (--seed ${saved.seed} --hosts ${saved.hosts} --pages ${saved.pages}): give those to resume it, or use a new --data folder`,
    );
  }
  try {
    const started = await startTestWeb({ ...web, port: saved.port });
    stderr.write(`resuming the crawl in ${dir}: the same test web, on port ${saved.port}\n`);
    return started;
  } catch (error) {
    throw refuse(
      `cannot resume the crawl in ${dir}: its test web's port ${saved.port} (which its queued URLs point at) is not free (${
        (error as Error).cause instanceof Error
          ? ((error as Error).cause as Error).message
          : (error as Error).message
      }); stop what uses it, or use a new --data folder`,
    );
  }
}

/** Where `ubicrawl cluster` makes its certificates, in the data folder `dir`. */
function certsDirOf(dir: string): string {
  return join(dir, "certs");
}

/** The credentials of the command's own calls to its agents: a CA made in `certsDir`, and its operator certificate. */
async function operatorSecurity(certsDir: string): Promise<TransportSecurity> {
  const made = await createClusterCertificates({ outDir: certsDir, agents: [] });
  return loadMutualTls(made.ca.certPath, made.operator ?? fail("no operator certificate"));
}

function refuse(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}

/** The agents of `ubicrawl cluster`, with the progress display (on `out`) and the fault keys. */
class LocalCluster {
  private readonly agents: AgentCluster;
  private readonly truth: ReadonlySet<string>;
  private nextId = 1;
  private lastKilled: string | undefined;
  private joinAddress: string | undefined;
  private readonly startedAtMs = Date.now();
  private killDone = false;
  private addDone = false;
  private readonly live: boolean;

  /** `security`: the credentials of this command's own calls to its agents (the operator certificate, or plaintext). */
  constructor(
    private readonly dir: string,
    private readonly web: RunningTestWeb,
    private readonly flags: ReturnType<typeof parseFlags<typeof CLUSTER_FLAGS>>,
    security: TransportSecurity,
    private readonly out: TextOutput,
  ) {
    this.live = out.isTTY === true;
    this.agents = new AgentCluster({
      flags: {
        ...testWebAgentFlags(join(dir, "hosts")),
        "delay-ms": flags["delay-ms"],
        "max-active-hosts": flags["max-active-hosts"],
        "heartbeat-ms": flags["heartbeat-ms"],
        "suspect-after-ms": flags["suspect-after-ms"],
        "takeover-delay-ms": flags["takeover-delay-ms"],
        // A console each, on loopback: its address is noted as soon as the agent logs it.
        http: "127.0.0.1:0",
      },
      dataDirOf: (id) => join(dir, id),
      security,
    });
    this.truth = new Set(
      computeTruth(web.model, web.port, {
        maxDepth: AGENT_DEFAULTS.maxDepth,
        maxPagesPerHost: AGENT_DEFAULTS.maxPagesPerHost,
        userAgent: AGENT_DEFAULTS.userAgent,
      }).urls,
    );
  }

  async run(): Promise<number> {
    await this.web.writeHostsFile(join(this.dir, "hosts"));
    await writeFile(join(this.dir, "seeds"), `${this.web.seeds.join("\n")}\n`);
    this.out.write(
      `test web: ${this.web.model.hosts.length} hosts, ${this.truth.size} reachable URLs, port ${this.web.port}\n` +
        `agents' data: ${this.dir}\n` +
        (this.flags.insecure
          ? "agent-to-agent traffic: plaintext (--insecure)\n"
          : `mutual TLS certificates: ${this.certsDir}\n`),
    );
    // Seeds go to the last agent: by the time it starts, the others know each other, so no host is
    // crawled by an agent that is about to lose it.
    for (let i = 0; i < this.flags.agents; i++) await this.startAgent(undefined, i === this.flags.agents - 1);
    const keys = this.listenToKeys();
    try {
      await this.watch();
    } finally {
      keys?.close();
    }
    return await this.summary();
  }

  /** SIGKILLs every agent still running, at once (for a process that is exiting and cannot wait). */
  killAll(): void {
    this.agents.killAll("SIGKILL");
  }

  /** Stops every agent still running (SIGTERM, then SIGKILL), waiting for them. */
  shutdown(): Promise<void> {
    return this.agents.stopAll();
  }

  private get certsDir(): string {
    return certsDirOf(this.dir);
  }

  /** `--insecure`, or the `--tls-*` flags of agent `id` after issuing its certificate. */
  private async securityFlags(id: string): Promise<AgentFlagValues> {
    if (this.flags.insecure) return { insecure: true };
    const made = await createClusterCertificates({ outDir: this.certsDir, agents: [id], operator: false });
    const files = made.agents.get(id) ?? fail(`no certificate for ${id}`);
    return {
      "tls-ca": join(this.certsDir, CA_CERT_FILE),
      "tls-cert": files.certPath,
      "tls-key": files.keyPath,
    };
  }

  private async startAgent(id = `agent-${this.nextId++}`, withSeeds = true): Promise<void> {
    const live = this.agents.liveAddresses();
    const joinList = live.length > 0 ? live : this.joinAddress === undefined ? [] : [this.joinAddress];
    const { process } = this.agents.launch(id, {
      join: joinList,
      flags: {
        ...(withSeeds ? { seeds: [join(this.dir, "seeds")] } : {}),
        ...(await this.securityFlags(id)),
      },
    });
    // From its start: its console's address comes before it listens.
    process.onRecord((record) => {
      if (record.event !== "listening") this.note(`${id}: ${describeAgentRecord(record)}`);
    });
    const address = await process.listening(AGENT_LISTEN_TIMEOUT_MS);
    this.joinAddress ??= address;
    this.note(`started ${id} (pid ${process.pid}) on ${address}`);
  }

  private killOne(): void {
    const live = this.agents.live();
    const victim = live[Math.floor(Math.random() * live.length)];
    if (!victim || live.length < 2) {
      this.note("not killing the last live agent");
      return;
    }
    victim.process.kill("SIGKILL");
    this.lastKilled = victim.id;
    this.note(`SIGKILLed ${victim.id} (pid ${victim.process.pid})`);
  }

  private listenToKeys(): { close(): void } | undefined {
    const stdin = process.stdin;
    if (!stdin.isTTY) return undefined;
    stdin.setRawMode(true);
    stdin.resume();
    const onData = (data: Buffer) => {
      const key = data.toString();
      if (key === "k") this.killOne();
      else if (key === "a") this.startAgent().catch((error) => this.note(String(error)));
      else if (key === "r" && this.lastKilled)
        this.startAgent(this.lastKilled).catch((error) => this.note(String(error)));
      else if (key === "s") this.printStats().catch((error) => this.note(String(error)));
      else if (key === "q" || key === "\u0003") this.shutdown().catch(() => {});
    };
    stdin.on("data", onData);
    return {
      close: () => {
        stdin.off("data", onData);
        stdin.setRawMode(false);
        stdin.pause();
      },
    };
  }

  /** Shows progress until every agent has exited. */
  private async watch(): Promise<void> {
    while (this.agents.live().length > 0) {
      await new Promise((resolveTick) => setTimeout(resolveTick, PROGRESS_INTERVAL_MS));
      const covered = this.coveredUrls();
      const percent = (100 * covered) / Math.max(1, this.truth.size);
      if (this.flags["kill-at"] !== undefined && !this.killDone && percent >= this.flags["kill-at"]) {
        this.killDone = true;
        this.killOne();
      }
      if (this.flags["add-at"] !== undefined && !this.addDone && percent >= this.flags["add-at"]) {
        this.addDone = true;
        await this.startAgent();
      }
      const stats = await this.agents.stats();
      const rate = stats.reduce((sum, agent) => sum + agent.pagesPerSecond, 0);
      const queued = stats.reduce((sum, agent) => sum + agent.queuedUrls, 0);
      const alive = this.agents.live().length;
      this.progress(
        `${covered}/${this.truth.size} URLs (${percent.toFixed(1)}%), ${rate.toFixed(0)} pages/s, ${queued} queued, ` +
          `${alive} agents running`,
      );
    }
  }

  private async printStats(): Promise<void> {
    this.note(formatStats(await this.agents.stats(), true));
  }

  private coveredUrls(): number {
    let covered = 0;
    for (const url of this.web.recorder.servedCounts().keys()) if (this.truth.has(url)) covered++;
    return covered;
  }

  /** The final report: the agents' crawl logs measured against the truth (as `ubicrawl report`). */
  private async summary(): Promise<number> {
    const ids = [...new Set(this.agents.members.map((agent) => agent.id))];
    // An agent that never got to open its data (it failed to start) has no crawl log to read.
    const dirs = ids.map((id) => join(this.dir, id)).filter((dir) => existsSync(join(dir, CRAWL_LOG_FILE)));
    const report = await measureAgentDirs(dirs, this.truth);
    // The test web's own count of page requests also sees fetches the logs cannot: those in flight
    // when an agent was killed.
    let served = 0;
    for (const [url, count] of this.web.recorder.servedCounts())
      if (!url.endsWith("/robots.txt")) served += count;
    const unlogged = served - report.fetches;
    const seconds = (Date.now() - this.startedAtMs) / 1000;
    const lines = [
      "",
      `cluster finished in ${seconds.toFixed(1)} s with ${this.agents.members.length} agents started` +
        (this.lastKilled ? ` (last killed: ${this.lastKilled})` : ""),
      ...formatReport(report),
      `  pages/s: ${(report.fetches / Math.max(seconds, 0.001)).toFixed(0)}; ${this.web.recorder.totalServed} requests served` +
        (unlogged > 0
          ? `; ${unlogged} page requests served that no crawl log holds (in flight at a kill)`
          : ""),
      `  most concurrent requests to one host: ${this.web.recorder.maxConcurrencyPerHost()}`,
      `  agents' data (WARC files, crawl logs): ${this.dir}`,
    ];
    this.out.write(`${lines.join("\n")}\n`);
    if (report.coverage !== null && report.coverage.covered === report.coverage.truthSize) return 0;
    const missing =
      report.coverage === null
        ? "no coverage could be measured"
        : `${report.coverage.truthSize - report.coverage.covered} URLs of the ground truth were not fetched`;
    this.out.write(
      `exit 1: ${missing} (a blacklisted host, a crawl stopped early, or a fault; the crawl logs in the data folder say which)\n`,
    );
    return 1;
  }

  private progress(text: string): void {
    if (this.live) this.out.write(`\r\x1b[K${text}`);
    else this.out.write(`${new Date().toISOString()} ${text}\n`);
  }

  private note(text: string): void {
    this.out.write(`${this.live ? "\r\x1b[K" : ""}${text}\n`);
  }
}

function fail(message: string): never {
  throw new UbiError(ErrorCode.CertificateFailed, message);
}
