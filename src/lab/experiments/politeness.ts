import { IP_LIMITS, type IpLimit } from "../../cluster/index.js";
import { AGENT_FLAGS, type FlagSpecs } from "../../flags/index.js";
import type { RunningTestWeb } from "../../testweb/index.js";
import { type AddressPoliteness, addressPoliteness, shortGapShare } from "../address-politeness.js";
import { type CrawlMetrics, round } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, type LabCrawl, LabCrawls, responseMsFlag } from "../lab-crawls.js";
import { choiceList, integerList } from "../lists.js";
import type { LocalClusterRun } from "../local-cluster.js";
import { linePlot } from "../plot.js";
import { byAgentsTable } from "../report-writer.js";

/**
 * Politeness towards servers, not host names, across the cluster: real agents crawl a web
 * where many hosts share one address and more share another behind a rate limit answering 429, under
 * `--ip-limit agent` (each agent counts its own requests) and `--ip-limit cluster` (each address's
 * authority counts everyone's) — what each address saw, from the test web's own records, and what the
 * cluster-wide limit costs in pages a second and messages.
 */

const POLITENESS_FLAGS = {
  agents: {
    type: "string",
    help: "agent counts, comma-separated (1…32)",
    default: "1,2,4,8",
    placeholder: "N,N,…",
  },
  limits: {
    type: "string",
    help: `--ip-limit values compared, comma-separated: ${IP_LIMITS.join(", ")}`,
    default: IP_LIMITS.join(","),
    placeholder: "L,…",
  },
  "max-per-ip": { ...AGENT_FLAGS["max-per-ip"], help: "--max-per-ip of the agents", max: 64 },
  "ip-delay-ms": {
    type: "integer",
    help: "--ip-delay-ms of the agents: least time between the starts of two requests to one address",
    default: 25,
    min: 0,
    max: 10_000,
  },
  "shared-hosts": {
    type: "integer",
    help: "hosts sharing one address (the test web's first), with no limit of its own",
    default: 20,
    min: 2,
  },
  "limited-hosts": {
    type: "integer",
    help: "hosts sharing another address (the next ones), which answers 429 beyond --limited-rps",
    default: 10,
    min: 2,
  },
  "limited-rps": {
    type: "integer",
    help: "requests the limited address takes in any second before it answers 429 (Retry-After: 1); the default is just above what --max-per-ip and --ip-delay-ms let one crawler send there",
    default: 40,
    min: 1,
    max: 100_000,
  },
  "response-ms": responseMsFlag(60, "so that an agent has --max-per-ip requests in flight at an address"),
  ...LAB_CRAWL_FLAGS,
  pages: { ...LAB_CRAWL_FLAGS.pages, default: 2000 },
} as const satisfies FlagSpecs;

/** One crawl: a limit at a number of agents. */
interface Point extends CrawlMetrics {
  readonly limit: IpLimit;
  readonly agents: number;
  /** The address of `--shared-hosts` hosts, the rate-limited one, and every address together. */
  readonly shared: AddressPoliteness;
  readonly limited: AddressPoliteness;
  readonly anywhere: AddressPoliteness;
  /** Messages the agents sent to IP authorities (their `stopped` records' `ipMessages`). */
  readonly ipMessages: number;
  /** Pages fetched a second, from the seeds to the crawl's end. */
  readonly pagesPerSecond: number;
  /** How late the test web may have stamped a request: see {@link LocalClusterRun.webLagMs}. */
  readonly webLagMs: number;
}

/** `ubicrawl experiment politeness`. */
export const politenessExperiment: Experiment<typeof POLITENESS_FLAGS> = {
  name: "politeness",
  summary: "requests at once and gaps per shared IP address, under each agent's limit and the cluster's",
  description: `Politeness towards servers across the cluster, with real agents: the test web puts its first
--shared-hosts hosts on one address and the next --limited-hosts on another, which answers 429
(Retry-After: 1) to a request beyond --limited-rps started there in the last second; the other hosts have
an address each (but for the test web's few pairs), and each answers after --response-ms. Hosts are
assigned by name, so a shared address's hosts land on different agents. For each --ip-limit and number of
agents, starts the agents as processes with --max-per-ip and --ip-delay-ms (the host delay 0), gives each
home pages of its own hosts and lets the crawl run to its end. Under --ip-limit agent each agent keeps
the limits for its own requests only; under --ip-limit cluster each address's authority (the agent its
address hashes to) grants everyone's. Reports, from the test web's own records of each request's start
and end, the most requests in flight at once and the shortest gap between two starts at the shared
address, at the limited one and at any address (with how late the test web's event loop ran, which a gap
it saw may be off by), the share of gaps under half the IP delay, the 429s answered, coverage, pages a
second, and the messages the agents sent to IP authorities.`,
  flags: POLITENESS_FLAGS,
  async run(flags, context) {
    const agentCounts = integerList("agents", flags.agents, 1, 32).sort((a, b) => a - b);
    const limits = choiceList("limits", flags.limits, IP_LIMITS);
    const sharedHosts = flags["shared-hosts"];
    const crawls = await LabCrawls.open(flags, "politeness", {
      responseDelayMs: flags["response-ms"],
      ipGroups: [
        { hosts: sharedHosts },
        { hosts: flags["limited-hosts"], requestsPerSecond: flags["limited-rps"] },
      ],
    });
    const { hosts } = crawls.web.model;
    const sharedIp = hosts[0]?.ip as string;
    const limitedIp = hosts[sharedHosts]?.ip as string;
    const points: Point[] = [];
    try {
      for (const agents of agentCounts) {
        for (const limit of limits) {
          const crawl = await crawls.crawl(`${limit}-${agents}`, agents, {
            "ip-limit": limit,
            "max-per-ip": flags["max-per-ip"],
            "ip-delay-ms": flags["ip-delay-ms"],
          });
          const point = pointOf(crawls.web, crawl, {
            limit,
            agents,
            sharedIp,
            limitedIp,
            delayMs: flags["ip-delay-ms"],
          });
          points.push(point);
          context.progress(
            `politeness: --ip-limit ${limit}, ${agents} agents: at most ${point.shared.peak} requests at ` +
              `once at the shared address, smallest gap ${gapText(point.anywhere.minGapMs)}, ` +
              `${point.limited.refused} answered 429, coverage ${point.coverage.toFixed(3)}, ` +
              `${point.pagesPerSecond.toFixed(0)} pages/s`,
          );
        }
      }
    } finally {
      await crawls.close();
    }
    return report(points, flags, {
      agents: agentCounts.join(", "),
      limits: limits.join(", "),
      "--max-per-ip": flags["max-per-ip"],
      "--ip-delay-ms": flags["ip-delay-ms"],
      "shared address": `${sharedHosts} hosts at ${sharedIp}`,
      "rate-limited address": `${flags["limited-hosts"]} hosts at ${limitedIp}, ${flags["limited-rps"]} requests a second`,
      "answer time of each request": `${flags["response-ms"]} ms`,
      ...crawls.description,
    });
  },
};

/**
 * A crawl's point: its measures and what the test web saw (its recorder is reset at each crawl's seeds).
 * A gap counts as short under half the IP delay: an agent spaces its starts by its clock's whole ms, and
 * the test web stamps a request when its loop reads it, so gaps of the delay are seen a few ms shorter.
 */
function pointOf(
  web: RunningTestWeb,
  crawl: LabCrawl,
  at: { limit: IpLimit; agents: number; sharedIp: string; limitedIp: string; delayMs: number },
): Point {
  const seen = addressPoliteness(web, at.delayMs / 2);
  return {
    ...crawl,
    limit: at.limit,
    agents: at.agents,
    shared: seen([at.sharedIp]),
    limited: seen([at.limitedIp]),
    anywhere: seen(new Set(web.model.hosts.map((host) => host.ip))),
    ipMessages: crawl.run.agents.reduce((sum, agent) => sum + Number(agent.stopped?.ipMessages ?? 0), 0),
    pagesPerSecond: crawl.seconds === 0 ? 0 : crawl.fetches / crawl.seconds,
    webLagMs: crawl.run.webLagMs,
  };
}

function gapText(gapMs: number | undefined): string {
  return gapMs === undefined ? "none" : `${gapMs.toFixed(1)} ms`;
}

/** `gapMs` for a table: 1 decimal, or empty when there was no gap. */
function gapCell(gapMs: number | undefined): number | string {
  return gapMs === undefined ? "" : round(gapMs, 1);
}

/** What the figures mean. */
const READING = `- **Requests at once.** Under \`--ip-limit agent\` each agent holds \`--max-per-ip\` for its own
  requests: an address whose hosts are spread over n agents sees up to n × \`--max-per-ip\` at once, as
  BUbiNG's per-agent IP delay did (LAW-Unimi/BUbiNG#8). Under \`--ip-limit cluster\` the address's
  authority grants every agent's requests there, so the address never sees more than \`--max-per-ip\`,
  whatever the agents.
- **Gaps.** \`--ip-delay-ms\` spaces the starts of requests to one address. Each agent alone spaces its
  own; n agents' starts interleave, so the smallest gap an address sees shrinks towards 0 under the
  agent limit. Under the cluster limit the authority spaces the slots it grants. The test web stamps a
  request when its event loop reads it, late by as much as that loop is held up (\`web_lag_ms\`, which
  a loaded machine makes tens of ms): a gap it saw may be that much shorter than the one sent, so only a
  gap shorter than the IP delay by more than that is sure to break it. The share of gaps under half the
  IP delay (\`short_gaps_*\`) tells the limits apart where the smallest gap cannot: near 0 for one
  agent, and for any number under the cluster limit; a large share for agents on their own.
- **429s.** The limited address takes \`--limited-rps\` requests a second: about what the two limits
  let one crawler send. n agents each within the limits on their own send n times that, and are
  refused; each refused agent backs off alone under the agent limit, while under the cluster limit a
  429 holds every agent's requests there.
- **Cost.** Under the cluster limit the shared addresses are crawled at one crawler's rate whatever the
  agents, so they bound the crawl's time and pages a second stay near one agent's; under the agent
  limit the crawl goes faster with more agents — by being impolite. Messages to IP authorities are the
  other cost: a lease per address with one user, renewed, and a request and a release per request at
  an address several agents use at once.`;

function report(
  points: readonly Point[],
  flags: { readonly "max-per-ip": number; readonly "ip-delay-ms": number },
  parameters: Record<string, string | number>,
): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "limit",
      "agents",
      "peak_shared",
      "peak_limited",
      "peak_any",
      "min_gap_shared_ms",
      "min_gap_limited_ms",
      "min_gap_any_ms",
      "short_gaps_shared",
      "short_gaps_any",
      "requests_limited",
      "refused_429",
      "coverage",
      "pages_per_second",
      "ip_messages",
      "fetches",
      "failures",
      "seconds",
      "web_lag_ms",
    ],
    rows: points.map((p) => [
      p.limit,
      p.agents,
      p.shared.peak,
      p.limited.peak,
      p.anywhere.peak,
      gapCell(p.shared.minGapMs),
      gapCell(p.limited.minGapMs),
      gapCell(p.anywhere.minGapMs),
      round(shortGapShare(p.shared)),
      round(shortGapShare(p.anywhere)),
      p.limited.requests,
      p.limited.refused,
      round(p.coverage),
      round(p.pagesPerSecond, 1),
      p.ipMessages,
      p.fetches,
      p.failures,
      round(p.seconds, 1),
      round(p.webLagMs, 1),
    ]),
  };
  const data = points.map((p) => ({
    limit: p.limit,
    agents: p.agents,
    peak: p.shared.peak,
    shortGaps: round(shortGapShare(p.anywhere)),
    refused: p.limited.refused,
    pagesPerSecond: round(p.pagesPerSecond, 1),
  }));
  const agents = { field: "agents", title: "agents", log: 2 } as const;
  const limit = { field: "limit", title: "--ip-limit" } as const;
  const agentCounts = [...new Set(points.map((p) => p.agents))];
  const limits = [...new Set(points.map((p) => p.limit))];
  const byAgents = (heading: string, pick: (p: Point) => string) => ({
    heading,
    body: byAgentsTable(
      agentCounts,
      limits,
      (each) => `--ip-limit ${each}`,
      (n, each) => {
        const point = points.find((p) => p.limit === each && p.agents === n);
        return point && pick(point);
      },
    ),
  });
  return {
    title: "Politeness per IP address across the cluster",
    method: politenessExperiment.description,
    parameters,
    tables: [summary],
    plots: [
      linePlot("peak-vs-agents", "Most requests at once at the shared address, against agents", data, {
        x: agents,
        y: { field: "peak", title: "requests at once (max)" },
        color: limit,
      }),
      linePlot(
        "short-gaps-vs-agents",
        "Share of the gaps between two request starts at an address under half --ip-delay-ms, against agents",
        data,
        {
          x: agents,
          y: { field: "shortGaps", title: "share of gaps under half the IP delay" },
          color: limit,
        },
      ),
      linePlot("refused-vs-agents", "Requests the rate-limited address answered 429, against agents", data, {
        x: agents,
        y: { field: "refused", title: "429s" },
        color: limit,
      }),
      linePlot("pages-per-second-vs-agents", "Pages fetched a second, against agents", data, {
        x: agents,
        y: { field: "pagesPerSecond", title: "pages/s" },
        color: limit,
      }),
    ],
    checks: checks(points, flags),
    sections: [
      { heading: "Reading the figures", body: READING },
      byAgents("Most requests at once at the shared address", (p) => String(p.shared.peak)),
      byAgents("Shortest gap between two request starts at any address (ms)", (p) =>
        gapText(p.anywhere.minGapMs),
      ),
      byAgents(
        "Gaps between consecutive starts at an address under half --ip-delay-ms",
        (p) => `${p.anywhere.shortGaps} of ${p.anywhere.gaps}`,
      ),
      byAgents(
        "Requests the rate-limited address answered 429",
        (p) => `${p.limited.refused} of ${p.limited.requests}`,
      ),
      byAgents("Pages a second", (p) => p.pagesPerSecond.toFixed(1)),
      byAgents("Messages to IP authorities", (p) => String(p.ipMessages)),
    ],
  };
}

/** The issue's claims, checked. */
function checks(
  points: readonly Point[],
  flags: { readonly "max-per-ip": number; readonly "ip-delay-ms": number },
): Check[] {
  const maxPerIp = flags["max-per-ip"];
  const delayMs = flags["ip-delay-ms"];
  const of = (limit: IpLimit) => points.filter((p) => p.limit === limit).sort((a, b) => a.agents - b.agents);
  const list = (series: readonly Point[], pick: (p: Point) => string | number) =>
    series.map((p) => `${p.agents}: ${pick(p)}`).join(", ");
  const cluster = of("cluster");
  const agent = of("agent");
  const result: Check[] = [];
  if (cluster.length > 0) {
    result.push(
      {
        claim: `With --ip-limit cluster, no address ever sees more than --max-per-ip (${maxPerIp}) requests at once, whatever the agents`,
        holds: cluster.every((p) => p.anywhere.peak <= maxPerIp),
        detail: `most requests at once at any address, by agents: ${list(cluster, (p) => p.anywhere.peak)}`,
      },
      {
        claim: `With --ip-limit cluster, no two requests to one address start closer than --ip-delay-ms (${delayMs} ms), whatever the agents: no gap the test web saw is shorter by more than its own lag`,
        holds: cluster.every(
          (p) => p.anywhere.minGapMs === undefined || p.anywhere.minGapMs >= delayMs - p.webLagMs,
        ),
        detail: `smallest gap at any address (the test web's lag), by agents: ${list(
          cluster,
          (p) => `${gapText(p.anywhere.minGapMs)} (${p.webLagMs.toFixed(1)} ms)`,
        )}`,
      },
      {
        claim: "With --ip-limit cluster, the crawl is complete whatever the agents: coverage 1",
        holds: cluster.every((p) => p.coverage === 1),
        detail: `coverage, by agents: ${list(cluster, (p) => round(p.coverage))}`,
      },
    );
  }
  const several = agent.filter((p) => p.agents > 1);
  const alone = agent.find((p) => p.agents === 1);
  if (several.length > 0) {
    result.push({
      claim: `With --ip-limit agent, each agent keeps --max-per-ip (${maxPerIp}) for itself only: one agent alone keeps it, several agents together break it at the shared address`,
      holds: several.every((p) => p.shared.peak > maxPerIp) && (alone?.shared.peak ?? 0) <= maxPerIp,
      detail: `most requests at once at the shared address, by agents: ${list(agent, (p) => p.shared.peak)}`,
    });
  }
  const paired = several.flatMap((a) => {
    const c = cluster.find((p) => p.agents === a.agents);
    return c ? [{ a, c }] : [];
  });
  if (paired.length > 0) {
    result.push({
      claim:
        "The rate-limited address answers no more 429s under the cluster limit than under the agents' own (a 429 holds every agent there)",
      holds: paired.every(({ a, c }) => c.limited.refused <= a.limited.refused),
      detail: paired
        .map(({ a, c }) => `${a.agents} agents: ${c.limited.refused} vs ${a.limited.refused}`)
        .join("; "),
    });
    result.push({
      claim:
        "Several agents space their starts at an address by the IP delay under the cluster limit, not under their own: fewer gaps under half --ip-delay-ms (the test web's lag makes a few of any crawl's)",
      holds: paired.every(({ a, c }) => shortGapShare(c.anywhere) < shortGapShare(a.anywhere)),
      detail: paired
        .map(
          ({ a, c }) =>
            `${a.agents} agents: ${round(shortGapShare(c.anywhere))} vs ${round(shortGapShare(a.anywhere))}`,
        )
        .join("; "),
    });
  }
  return result;
}
