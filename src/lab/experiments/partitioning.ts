import { PARTITIONINGS, type Partitioning } from "../../cluster/index.js";
import type { FlagSpecs } from "../../flags/index.js";
import type { ServedRecorder } from "../../testweb/index.js";
import { type CrawlMetrics, round } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, LabCrawls, responseMsFlag } from "../lab-crawls.js";
import { choiceList, integerList } from "../lists.js";
import { linePlot } from "../plot.js";
import { byAgentsTable } from "../report-writer.js";

/**
 * Cho and Garcia-Molina's choice of partition function: URLs assigned to agents by the hash of their
 * host (ubicrawl's design) or by the hash of the URL itself — what each costs in communication, and
 * what URL hashing does to politeness, with real agents (`--partition url`) on the built-in test web.
 */

const PARTITIONING_FLAGS = {
  partitions: {
    type: "string",
    help: `partition functions compared, comma-separated: ${PARTITIONINGS.join(", ")}`,
    default: PARTITIONINGS.join(","),
    placeholder: "P,…",
  },
  agents: {
    type: "string",
    help: "agent counts, comma-separated (1…32; one agent is one crawl, the same under both)",
    default: "1,2,4,8",
    placeholder: "N,N,…",
  },
  "response-ms": responseMsFlag(20, "so that requests to one host overlap when two agents send them"),
  ...LAB_CRAWL_FLAGS,
} as const satisfies FlagSpecs;

/** How the test web saw a crawl's requests, host by host. */
interface Politeness {
  /** Hosts that got any request. */
  readonly hosts: number;
  /** The most requests one host had in flight at once. */
  readonly peakPerHost: number;
  /** Share of those hosts that ever had two or more requests in flight at once. */
  readonly hostsHitAtOnce: number;
  /** Requests a host had in flight on average while it had any. */
  readonly meanPerHost: number;
  /** robots.txt requests per host. */
  readonly robotsPerHost: number;
}

/** One crawl: a partition function at a number of agents. */
interface Point extends CrawlMetrics, Politeness {
  readonly partition: Partitioning;
  readonly agents: number;
  /** Agents taken for dead during the crawl (`LocalClusterRun.suspicions`). */
  readonly suspicions: number;
}

/** `ubicrawl experiment partitioning`. */
export const partitioningExperiment: Experiment<typeof PARTITIONING_FLAGS> = {
  name: "partitioning",
  summary: "host hash vs URL hash: communication and politeness (Cho and Garcia-Molina)",
  description: `Cho and Garcia-Molina's partition functions compared, with real agents in the exchange mode:
for each partition function and number of agents, starts the agents as processes (--partition host or
url), waits until each sees all the others, gives each --seeds-per-agent home pages it owns (under URL
hashing, home pages whose URL it owns) and lets the crawl run to its end, on a test web that takes
--response-ms to answer each request. Under host hashing one agent crawls each host, alone; under URL
hashing every agent crawls every host it has URLs of, each polite towards it on its own (one request at
a time, its robots.txt fetched by each), and a link is sent to another agent unless its URL hashes to
this one. Reports the communication overhead (URLs sent between agents per page fetched) and messages
per page, coverage and overlap; and, from the test web's own count of the requests in flight per host,
the most requests a host had at once, the share of hosts that had two or more, the requests a host
had in flight on average while it had any, and robots.txt requests per host.`,
  flags: PARTITIONING_FLAGS,
  async run(flags, context) {
    const partitions = choiceList("partitions", flags.partitions, PARTITIONINGS);
    const agentCounts = integerList("agents", flags.agents, 1, 32).sort((a, b) => a - b);
    const crawls = await LabCrawls.open(flags, "partitioning", { responseDelayMs: flags["response-ms"] });
    const points: Point[] = [];
    try {
      for (const agents of agentCounts) {
        // One agent owns every URL under either function: its crawl is the same.
        const runs = agents === 1 ? ([partitions[0]] as Partitioning[]) : partitions;
        for (const partition of runs) {
          const crawl = await crawls.crawl(`${partition}-${agents}`, agents, { partition });
          const point: Point = {
            partition,
            agents,
            ...crawl,
            ...politenessOf(crawls.web.recorder),
            suspicions: crawl.run.suspicions,
          };
          if (agents === 1) for (const each of partitions) points.push({ ...point, partition: each });
          else points.push(point);
          context.progress(
            `partitioning: ${agents === 1 ? "either" : `by ${partition}`}, ${agents} agents: ` +
              `${point.overhead.toFixed(3)} URLs sent a page, at most ${point.peakPerHost} requests ` +
              `at once to a host, coverage ${point.coverage.toFixed(3)}, ${point.seconds.toFixed(1)} s`,
          );
        }
      }
    } finally {
      await crawls.close();
    }
    return report(points, {
      partitions: partitions.join(", "),
      agents: agentCounts.join(", "),
      "answer time of each request": `${flags["response-ms"]} ms`,
      ...crawls.description,
    });
  },
};

/** The politeness of the crawl the test web's recorder saw last (it is reset at each crawl's seeds). */
function politenessOf(recorder: ServedRecorder): Politeness {
  const hosts = new Set<string>();
  for (const url of recorder.servedCounts().keys()) hosts.add(new URL(url).hostname);
  let robots = 0;
  for (const host of hosts) robots += recorder.robotsFetches(host);
  const count = Math.max(1, hosts.size);
  return {
    hosts: hosts.size,
    peakPerHost: recorder.maxConcurrencyPerHost(),
    hostsHitAtOnce: recorder.hostsWithConcurrentRequests().length / count,
    meanPerHost: recorder.meanConcurrencyPerHost(),
    robotsPerHost: robots / count,
  };
}

function messagesPerPage(point: CrawlMetrics): number {
  return point.fetches === 0 ? 0 : point.batchesSent / point.fetches;
}

/** What the figures mean. */
const READING = `- **Communication.** About 80% of an article's links on the built-in web stay on its host. Host
  hashing keeps them with the agent that found them; URL hashing sends each to another agent with
  probability (n − 1)/n, so the overhead is several times host hashing's, and grows with the agents as
  the paper found. Each agent still sends a URL once at most (its seen set and its record of what it
  sent drop repeats), so the overhead stays near the distinct links of a page, not all of them.
- **Politeness.** Under host hashing one agent holds each host and sends it one request at a time:
  the test web never sees two at once. Under URL hashing every agent crawls every host, and each is
  polite only on its own: a host gets up to one request per agent at once, its rate limit (here none,
  \`--delay-ms 0\`) is multiplied by the agents, and each agent fetches its robots.txt. Keeping URL
  hashing polite would take a lock or a rate shared by all agents for each host — the coordination
  host hashing avoids.
- **Time.** URL hashing may finish sooner: a host's pages are fetched by several agents in parallel.
  That is the impoliteness, not a gain.`;

function report(points: readonly Point[], parameters: Record<string, string | number>): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "partition",
      "agents",
      "communication_overhead",
      "messages_per_page",
      "coverage",
      "overlap",
      "peak_requests_per_host",
      "hosts_hit_at_once",
      "mean_requests_per_busy_host",
      "robots_per_host",
      "hosts",
      "fetches",
      "failures",
      "urls_sent",
      "seconds",
    ],
    rows: points.map((p) => [
      p.partition,
      p.agents,
      round(p.overhead),
      round(messagesPerPage(p), 5),
      round(p.coverage),
      round(p.overlap),
      p.peakPerHost,
      round(p.hostsHitAtOnce),
      round(p.meanPerHost),
      round(p.robotsPerHost, 2),
      p.hosts,
      p.fetches,
      p.failures,
      p.urlsSent,
      round(p.seconds, 1),
    ]),
  };
  const data = points.map((p) => ({
    partition: p.partition,
    agents: p.agents,
    overhead: round(p.overhead),
    peak: p.peakPerHost,
    mean: round(p.meanPerHost),
  }));
  const agents = { field: "agents", title: "agents", log: 2 } as const;
  const partition = { field: "partition", title: "partition by" } as const;
  const agentCounts = [...new Set(points.map((p) => p.agents))];
  const partitions = [...new Set(points.map((p) => p.partition))];
  const byAgents = (heading: string, pick: (p: Point) => string) => ({
    heading,
    body: byAgentsTable(
      agentCounts,
      partitions,
      (each) => `by ${each}`,
      (agents, each) => {
        const point = points.find((p) => p.partition === each && p.agents === agents);
        return point && pick(point);
      },
    ),
  });
  return {
    title: "Partitioning by host hash and by URL hash (Cho and Garcia-Molina)",
    method: partitioningExperiment.description,
    parameters,
    tables: [summary],
    plots: [
      linePlot(
        "overhead-vs-agents",
        "Communication overhead (URLs sent between agents per page fetched) against agents",
        data,
        { x: agents, y: { field: "overhead", title: "URLs sent per page" }, color: partition },
      ),
      linePlot(
        "peak-per-host-vs-agents",
        "Most requests one host had in flight at once, against agents",
        data,
        {
          x: agents,
          y: { field: "peak", title: "requests at once to a host (max)" },
          color: partition,
        },
      ),
      linePlot(
        "mean-per-host-vs-agents",
        "Requests a host had in flight on average while it had any, against agents",
        data,
        { x: agents, y: { field: "mean", title: "requests in flight per busy host" }, color: partition },
      ),
    ],
    checks: checks(points),
    sections: [
      { heading: "Reading the figures", body: READING },
      byAgents("Communication overhead: URLs sent between agents per page fetched", (p) =>
        p.overhead.toFixed(3),
      ),
      byAgents("Most requests one host had in flight at once", (p) => String(p.peakPerHost)),
      byAgents("Share of hosts that had two or more requests in flight at once", (p) =>
        p.hostsHitAtOnce.toFixed(3),
      ),
      byAgents("robots.txt requests per host", (p) => p.robotsPerHost.toFixed(2)),
    ],
  };
}

/** The paper's findings, checked. */
function checks(points: readonly Point[]): Check[] {
  const of = (partition: Partitioning) =>
    points.filter((p) => p.partition === partition).sort((a, b) => a.agents - b.agents);
  const list = (series: readonly Point[], pick: (p: Point) => number) =>
    series.map((p) => `${p.agents}: ${round(pick(p), 3)}`).join(", ");
  const byHost = of("host");
  const byUrl = of("url").filter((p) => p.agents > 1);
  const result: Check[] = [
    {
      claim: "Either partition function in the exchange mode covers the web once: coverage 1, overlap 0",
      holds: points.every((p) => p.coverage === 1 && p.fetches === p.distinct),
      detail: points
        .map(
          (p) =>
            `${p.partition} ${p.agents}: coverage ${round(p.coverage)}, overlap ${round(p.overlap)}` +
            (p.suspicions > 0 ? ` (${p.suspicions} agents taken for dead meanwhile)` : ""),
        )
        .join("; "),
    },
  ];
  if (byHost.length > 0) {
    result.push({
      claim: "Host hashing keeps each host to one agent: never two requests at once to a host",
      holds: byHost.every((p) => p.peakPerHost <= 1),
      detail: `most requests at once to a host, by agents: ${list(byHost, (p) => p.peakPerHost)}`,
    });
  }
  if (byUrl.length > 0) {
    result.push({
      claim:
        "URL hashing loses per-host politeness: hosts get requests from several agents at once (Cho and Garcia-Molina)",
      holds: byUrl.every((p) => p.peakPerHost >= 2),
      detail: `most requests at once to a host, by agents: ${list(byUrl, (p) => p.peakPerHost)}; share of hosts hit at once: ${list(byUrl, (p) => p.hostsHitAtOnce)}`,
    });
    result.push({
      claim: "URL hashing fetches each host's robots.txt once per agent that crawls it",
      holds: byUrl.every((p) => p.robotsPerHost > 1),
      detail: `robots.txt requests per host, by agents: ${list(byUrl, (p) => p.robotsPerHost)}`,
    });
  }
  const paired = byUrl.flatMap((url) => {
    const host = byHost.find((p) => p.agents === url.agents);
    return host ? [{ url, host }] : [];
  });
  if (paired.length > 0) {
    result.push({
      claim:
        "URL hashing sends far more URLs between agents than host hashing, most links staying on their host (Cho and Garcia-Molina)",
      holds: paired.every(({ url, host }) => url.overhead > 2 * host.overhead),
      detail: paired
        .map(
          ({ url, host }) =>
            `${url.agents} agents: ${url.overhead.toFixed(3)} by URL vs ${host.overhead.toFixed(3)} by host`,
        )
        .join("; "),
    });
  }
  return result;
}
