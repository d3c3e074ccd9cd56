// What `--ip-limit cluster` costs against `--ip-limit agent` where addresses are not shared: n agents
// (default 4) crawl the same test web (every host on an address of its own unless --shared-percent; no
// IP group), once with each limit, alternating for --runs rounds; prints pages/s of each, their ratio,
// and the messages the agents sent to IP authorities (`ipMessages` of their `stopped` records). The
// issue's target is a cost of at most 5% on a web of one host an address.
// Run after `npm run build`:  node bench/ip-limit.mjs [--agents 4] [--hosts 200] [--pages 8000] [--runs 2]
//                            [--shared-percent 0] [--cpu-prof DIR] [--json]
import { availableParallelism, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { startClusterAgents } from "./lib/cluster-start.mjs";
import { measureCrawlLogs, parseAgentSummary, readTruth } from "./lib/crawl-metrics.mjs";
import { parseBenchFlags } from "./lib/flags.mjs";
import { benchAgentFlags, openWorkspace, startTestWebProcess } from "./lib/processes.mjs";
import { fixed, formatTable, percent } from "./lib/report.mjs";
import { StatsPoller } from "./lib/stats-poller.mjs";

const FLAGS = {
  agents: { type: "integer", help: "agents of each cluster", default: 4, min: 2, max: 64 },
  hosts: { type: "integer", help: "hosts of the test web", default: 200, min: 2, max: 5000 },
  pages: { type: "integer", help: "pages of the test web (about)", default: 8_000, min: 80, max: 1_000_000 },
  seed: { type: "integer", help: "seed of the test web", default: 1 },
  "shared-percent": {
    type: "integer",
    help: "hosts sharing the address of the host before them, in percent (the test web's own default is 5; the issue's cost is for a web of one host an address)",
    default: 0,
    min: 0,
    max: 100,
  },
  runs: { type: "integer", help: "rounds, each crawling once with each limit", default: 2, min: 1, max: 20 },
  "max-active-hosts": { type: "integer", help: "hosts each agent visits at once", default: 64, min: 1 },
  "timeout-s": { type: "integer", help: "give up on a crawl after this long", default: 600, min: 1 },
  "cpu-prof": {
    type: "string",
    help: "write a V8 CPU profile of every agent into this folder (<folder>/round-<r>-<limit>/<id>.cpuprofile)",
  },
  json: { type: "boolean", help: "print JSON instead of a table" },
  keep: { type: "boolean", help: "keep the agents' data and print where" },
};
const LIMITS = ["agent", "cluster"];

const flags = parseBenchFlags(process.argv.slice(2), FLAGS, "node bench/ip-limit.mjs [flags]");
const web = {
  seed: flags.seed,
  hosts: flags.hosts,
  pages: flags.pages,
  sharedAddressPercent: flags["shared-percent"],
};
const { dir, children } = await openWorkspace("ip-limit", flags.keep);
const log = (text) => process.stderr.write(`${text}\n`);
const loadBefore = loadavg()[0];
const testweb = await startTestWebProcess(dir, web);
children.add(testweb.child);
const truth = await readTruth(testweb.files.truth);

const runs = [];
let failed = false;
try {
  for (let round = 1; round <= flags.runs; round++) {
    // Alternating which goes first, so a machine that grows busier does not favour one.
    const order = round % 2 === 1 ? LIMITS : [...LIMITS].reverse();
    for (const limit of order) {
      const run = await crawl(limit, round);
      runs.push(run);
      if (!run.ok) failed = true;
      log(
        `round ${round}, --ip-limit ${limit}: ${run.pages} pages in ${fixed(run.wallSeconds, 1)} s, ` +
          `${fixed(run.pagesPerSecond, 0)} pages/s, ${run.ipMessages} messages to authorities, coverage ${percent(run.coverage)}`,
      );
    }
  }
} finally {
  await Promise.all([...children].map((child) => child.stop()));
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const summary = Object.fromEntries(
  LIMITS.map((limit) => [limit, median(runs.filter((r) => r.limit === limit).map((r) => r.pagesPerSecond))]),
);
const cost = 1 - summary.cluster / summary.agent;
const loadAverage = { before: loadBefore, after: loadavg()[0], cpus: availableParallelism() };
if (flags.json) {
  process.stdout.write(`${JSON.stringify({ web, flags, runs, summary, cost, loadAverage }, null, 2)}\n`);
} else {
  const headers = [
    "round",
    "--ip-limit",
    "pages",
    "wall s",
    "pages/s",
    "messages to authorities",
    "coverage",
  ];
  const rows = runs.map((r) => [
    String(r.round),
    r.limit,
    String(r.pages),
    fixed(r.wallSeconds, 1),
    fixed(r.pagesPerSecond, 0),
    String(r.ipMessages),
    percent(r.coverage),
  ]);
  process.stdout.write(
    `${formatTable(headers, rows)}\n` +
      `median pages/s: agent ${fixed(summary.agent, 0)}, cluster ${fixed(summary.cluster, 0)}: ` +
      `cluster costs ${percent(cost, 1)} (${flags.agents} agents, ${flags.hosts} hosts; load average ` +
      `${fixed(loadAverage.before, 1)} → ${fixed(loadAverage.after, 1)} on ${loadAverage.cpus} CPUs)\n`,
  );
}
process.exitCode = failed ? 1 : 0;

/** One crawl of the whole web by `flags.agents` agents with `--ip-limit limit`; its figures. */
async function crawl(limit, round) {
  const runDir = join(dir, `round-${round}-${limit}`);
  const stats = new StatsPoller(1000);
  const agents = [];
  let timedOut = false;
  await startClusterAgents({
    count: flags.agents,
    runDir,
    flags: [...benchAgentFlags(testweb.files.hosts, flags["max-active-hosts"]), "--ip-limit", limit],
    seedsFile: testweb.files.seeds,
    stats,
    spawnOptionsOf: (i) =>
      flags["cpu-prof"] === undefined
        ? {}
        : {
            nodeArgs: [
              ...[
                "--cpu-prof",
                "--cpu-prof-dir",
                join(resolve(flags["cpu-prof"]), `round-${round}-${limit}`),
              ],
              ...["--cpu-prof-name", `agent-${i}.cpuprofile`],
            ],
          },
    onSpawn: (agent) => {
      children.add(agent);
      agents.push(agent);
    },
    log,
  });
  const startedAtMs = agents.at(-1).startedAtMs;
  const timer = setTimeout(() => {
    timedOut = true;
    for (const agent of agents) agent.stop();
  }, flags["timeout-s"] * 1000);
  const codes = await Promise.all(agents.map((agent) => agent.exited));
  clearTimeout(timer);
  stats.stop();
  const wallSeconds = (Math.max(...agents.map((agent) => agent.exitedAtMs)) - startedAtMs) / 1000;
  const metrics = await measureCrawlLogs(
    agents.map((agent) => join(runDir, agent.name, "crawl.log")),
    truth,
  );
  const ipMessages = agents.reduce((sum, agent) => sum + parseAgentSummary(agent.stderrLines).ipMessages, 0);
  for (const agent of agents) children.delete(agent);
  return {
    round,
    limit,
    ok: !timedOut && codes.every((code) => code === 0),
    pages: metrics.fetches,
    wallSeconds,
    pagesPerSecond: metrics.fetches / wallSeconds,
    coverage: metrics.coverage,
    ipMessages,
  };
}
