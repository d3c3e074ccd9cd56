import { DEFAULT_RECOVERY_K } from "../../cluster/index.js";
import type { FlagSpecs } from "../../flags/index.js";
import { Assignment, loadHasher64 } from "../../hashing/index.js";
import type { AgentFlagValues } from "../../launch/index.js";
import { readFetches } from "../../report/index.js";
import { hostKey } from "../../url/index.js";
import { type CrawlMetrics, round } from "../crawl-metrics.js";
import type { Check, Experiment, ExperimentResult, Plot, Table } from "../experiment.js";
import { LAB_CRAWL_FLAGS, type LabCrawl, LabCrawls, responseMsFlag } from "../lab-crawls.js";
import { choiceList } from "../lists.js";
import type { LocalClusterFault } from "../local-cluster.js";
import { markdownTable } from "../report-writer.js";

/**
 * Fault tolerance, which UbiCrawler's authors leave to be measured: agents killed, restarted or added
 * in the middle of a crawl by real agents, with page recovery and the takeover grace on and off —
 * what is lost, what is fetched twice, and how long the dead agents' hosts wait for a new crawler.
 */

/** A fault scenario: what happens, and how the agents are set. */
interface Scenario {
  readonly summary: string;
  /** SIGKILL the faulty agents. */
  readonly kill: boolean;
  /** Restart them this long after the kill. */
  readonly restartAfterMs?: number;
  /** Add the faulty agents instead (they join mid-crawl). */
  readonly add: boolean;
  /** Cut the faulty agents off from the others (both ways), and join them again this long after. */
  readonly partitionMs?: number;
  readonly flags: AgentFlagValues;
}

/** How long the killed agents' hosts are held for them in the scenarios with a grace. */
const GRACE_MS = 10_000;
/**
 * A fetch's longest time in every scenario, shorter than the test web's agents' own (10 s): the web
 * answers in milliseconds, and after a kill the IP authorities count the dead agent's own requests for
 * a lease and a fetch's time (ip-crash-reports.ts), which the gap after a kill would otherwise measure.
 */
const FETCH_TIMEOUT_MS = 5_000;
/** How long the partition scenario keeps the faulty agents cut off. */
const PARTITION_MS = 5000;

const SCENARIOS = {
  takeover: {
    summary: "killed, not restarted: the others take their hosts at once",
    kill: true,
    add: false,
    flags: { "takeover-delay-ms": 0 },
  },
  "restart-held": {
    summary: `killed, restarted 1 s later, their hosts held for them (--takeover-delay-ms ${GRACE_MS})`,
    kill: true,
    restartAfterMs: 1000,
    add: false,
    flags: { "takeover-delay-ms": GRACE_MS },
  },
  "restart-taken": {
    summary: "killed, restarted 3 s later, the others crawling their hosts meanwhile; page recovery on",
    kill: true,
    restartAfterMs: 3000,
    add: false,
    flags: { "takeover-delay-ms": 0 },
  },
  "restart-taken-no-recovery": {
    summary:
      "as restart-taken, the restarted agent not asking (--recovery-k 0): only the push hands hosts back",
    kill: true,
    restartAfterMs: 3000,
    add: false,
    flags: { "takeover-delay-ms": 0, "recovery-k": 0 },
  },
  join: {
    summary: "added mid-crawl: hosts move to them with the pages done there (page recovery)",
    kill: false,
    add: true,
    flags: {},
  },
  "join-no-recovery": {
    summary:
      "as join, the newcomer not asking the previous owners (--recovery-k 0): only their push hands hosts over",
    kill: false,
    add: true,
    flags: { "recovery-k": 0 },
  },
  partition: {
    summary: `cut off from the others, both ways, for ${PARTITION_MS / 1000} s, then joined again`,
    kill: false,
    add: false,
    partitionMs: PARTITION_MS,
    // Each agent's own IP limit: under the cluster's, the cut-off side grants nothing at the addresses
    // whose authority is across the cut before the IP grace (their agents may still use them), which
    // outlasts the cut; the scenario is about hosts.
    flags: { "takeover-delay-ms": 0, "ip-limit": "agent" },
  },
} as const satisfies Record<string, Scenario>;

type ScenarioName = keyof typeof SCENARIOS;
const SCENARIO_NAMES = Object.keys(SCENARIOS) as ScenarioName[];

const FAULTS_FLAGS = {
  scenarios: {
    type: "string",
    help: `scenarios, comma-separated: ${SCENARIO_NAMES.join(", ")}`,
    default: SCENARIO_NAMES.join(","),
    placeholder: "NAME,…",
  },
  agents: { type: "integer", help: "agents at the start of every crawl", default: 4, min: 2, max: 32 },
  faulty: {
    type: "integer",
    help: "agents killed (or added) in each scenario",
    default: 1,
    min: 1,
    max: 31,
  },
  at: {
    type: "integer",
    help: "the fault comes when this percentage of the crawl's requests is served",
    default: 30,
    min: 1,
    max: 90,
  },
  "response-ms": responseMsFlag(
    10,
    "so that a host's pages take time (with none, the crawl may end before an agent added at --at has joined)",
  ),
  ...LAB_CRAWL_FLAGS,
} as const satisfies FlagSpecs;

/** One crawl: a scenario. */
interface Point extends CrawlMetrics {
  readonly scenario: ScenarioName;
  /** Fetches of a URL fetched before (N − I). */
  readonly refetched: number;
  /**
   * Seconds from the fault until the faulty agents' part of the web is crawled again: the first fetch
   * after a kill of a host the killed agents owned (by a survivor, or by a killed agent restarted),
   * after a partition of a host the cut-off agents owned by another agent, or an added agent's first
   * fetch; undefined when none came.
   */
  readonly gapSeconds: number | undefined;
  /**
   * Fetches, from the moment hosts moved back or on (a killed agent's restart, a partition's heal, an
   * agent's join), of a URL fetched before: what page recovery is there to save. Undefined for a
   * fault after which no host moves again (a kill alone).
   */
  readonly refetchedOnReturn: number | undefined;
}

/** `ubicrawl experiment faults`. */
export const faultsExperiment: Experiment<typeof FAULTS_FLAGS> = {
  name: "faults",
  summary:
    "agents killed, restarted, added or cut off mid-crawl: pages lost and fetched twice, hosts left waiting",
  description: `Fault tolerance with real agents, which UbiCrawler's authors leave to be measured: in each
scenario --agents agents crawl the test web (each answer after --response-ms) as in the modes experiment (exchange mode, seeds of their own
hosts) and, once --at percent of the crawl's requests are served, --faulty agents are SIGKILLed (the
last ones started), restarted later on their data folders, added (started with the others, they join
then: their --join address is a door that opens at the fault, so what is measured is the join, not a
process's start-up), or cut off from the others (their
cluster traffic passes through fault proxies that then refuse it both ways). Failure detection:
heartbeats every 200 ms, a silent agent suspected after 1.2 s. Scenarios: ${SCENARIO_NAMES.map(
    (name) => `${name} (${SCENARIOS[name].summary})`,
  ).join("; ")}. Reports coverage (pages lost), pages fetched twice (overlap), and the gap: seconds
from the fault until the faulty agents' part of the web is crawled again. A killed agent's counters die
with it: URLs sent count the others'.`,
  flags: FAULTS_FLAGS,
  async run(flags, context) {
    const names = choiceList("scenarios", flags.scenarios, SCENARIO_NAMES);
    const crawls = await LabCrawls.open(flags, "faults", { responseDelayMs: flags["response-ms"] });
    const afterRequests = Math.round((crawls.expectedRequests * flags.at) / 100);
    const hasher = await loadHasher64();
    const initial = Assignment.build(
      Array.from({ length: flags.agents }, (_, i) => ({ id: `agent-${i + 1}` })),
      {},
      hasher,
    );
    const points: Point[] = [];
    try {
      for (const scenario of names) {
        const spec: Scenario = SCENARIOS[scenario];
        const fault: LocalClusterFault = {
          afterRequests,
          ...(spec.kill ? { kill: flags.faulty } : {}),
          ...(spec.restartAfterMs === undefined ? {} : { restartAfterMs: spec.restartAfterMs }),
          ...(spec.add ? { add: flags.faulty } : {}),
          ...(spec.partitionMs === undefined
            ? {}
            : { partition: flags.faulty, healAfterMs: spec.partitionMs }),
        };
        const agentFlags = { ...spec.flags, "fetch-timeout-ms": FETCH_TIMEOUT_MS };
        const crawl = await crawls.crawl(scenario, flags.agents, agentFlags, { fault });
        const point: Point = {
          ...crawl,
          scenario,
          refetched: crawl.fetches - crawl.distinct,
          gapSeconds: await gap(crawl, (host) => initial.ownerOf(host)),
          refetchedOnReturn: await refetchedOnReturn(crawl),
        };
        points.push(point);
        context.progress(
          `faults: ${scenario}: coverage ${point.coverage.toFixed(4)}, ${point.refetched} fetched twice, ` +
            `gap ${point.gapSeconds === undefined ? "none" : `${point.gapSeconds.toFixed(2)} s`}, ${point.seconds.toFixed(1)} s`,
        );
      }
    } finally {
      await crawls.close();
    }
    return report(points, {
      agents: flags.agents,
      "faulty agents": flags.faulty,
      "fault at": `${flags.at}% of the requests (${afterRequests})`,
      "answer time of each request": `${flags["response-ms"]} ms`,
      ...crawls.description,
    });
  },
};

/** See {@link Point.gapSeconds}. */
async function gap(crawl: LabCrawl, initialOwnerOf: (host: string) => string): Promise<number | undefined> {
  const fault = crawl.run.fault;
  if (!fault) return undefined;
  // The agents whose part of the web the others must take: killed, or cut off (which go on crawling it).
  const lost = new Set([...fault.killed, ...fault.partitioned]);
  const added = new Set(fault.added);
  let first: number | undefined;
  for (const agent of crawl.run.agents) {
    // A cut-off agent goes on crawling its own hosts: those fetches close no gap.
    if (fault.partitioned.includes(agent.id)) continue;
    for (const fetch of await readFetches(agent.dir)) {
      if (fetch.atMs <= fault.atMs) continue;
      const counts = added.size > 0 ? added.has(agent.id) : lost.has(initialOwnerOf(hostKey(fetch.url)));
      if (counts && (first === undefined || fetch.atMs < first)) first = fetch.atMs;
    }
  }
  return first === undefined ? undefined : (first - fault.atMs) / 1000;
}

/** See {@link Point.refetchedOnReturn}. */
async function refetchedOnReturn(crawl: LabCrawl): Promise<number | undefined> {
  const fault = crawl.run.fault;
  const returnAtMs =
    fault?.restartedAtMs ?? fault?.healedAtMs ?? (fault && fault.added.length > 0 ? fault.atMs : undefined);
  if (returnAtMs === undefined) return undefined;
  const fetches = (await Promise.all(crawl.run.agents.map((agent) => readFetches(agent.dir))))
    .flat()
    .sort((a, b) => a.atMs - b.atMs);
  const seen = new Set<string>();
  let again = 0;
  for (const { url, atMs } of fetches) {
    if (seen.has(url) && atMs >= returnAtMs) again++;
    seen.add(url);
  }
  return again;
}

function report(points: readonly Point[], parameters: Record<string, string | number>): ExperimentResult {
  const summary: Table = {
    name: "summary",
    columns: [
      "scenario",
      "coverage",
      "overlap",
      "refetched",
      "refetched_on_return",
      "gap_s",
      "fetches",
      "failures",
      "urls_sent",
      "quality",
      "seconds",
    ],
    rows: points.map((p) => [
      p.scenario,
      round(p.coverage, 5),
      round(p.overlap, 5),
      p.refetched,
      p.refetchedOnReturn ?? "",
      p.gapSeconds === undefined ? "" : round(p.gapSeconds, 2),
      p.fetches,
      p.failures,
      p.urlsSent,
      round(p.quality),
      round(p.seconds, 1),
    ]),
  };
  const plots: Plot[] = [
    {
      name: "refetched-by-scenario",
      title: "Pages fetched twice, by scenario",
      spec: {
        data: { values: points.map((p) => ({ scenario: p.scenario, refetched: p.refetched })) },
        width: 360,
        height: 240,
        mark: "bar",
        encoding: {
          x: { field: "scenario", type: "nominal", sort: null, title: "scenario" },
          y: { field: "refetched", type: "quantitative", title: "pages fetched twice" },
        },
      },
    },
  ];
  return {
    title: "Agents killed, restarted and added mid-crawl",
    method: faultsExperiment.description,
    parameters: { scenarios: points.map((p) => p.scenario).join(", "), ...parameters },
    tables: [summary],
    plots,
    checks: checks(points),
    sections: [
      {
        heading: "Scenarios",
        body: markdownTable(
          ["scenario", "what happens"],
          points.map((p) => [p.scenario, SCENARIOS[p.scenario].summary]),
        ),
      },
      { heading: "Reading the figures", body: READING },
    ],
  };
}

/** What the figures mean here. */
const READING = `- **takeover**: the others cannot ask a dead agent what it fetched, so they fetch its hosts' pages
  again from their queues' start: pages fetched twice, about as many as the dead agent had fetched
  on hosts with work left. The gap is the failure detector's timeout and a heartbeat or two.
- **restart-held**: the hosts wait for the restarted agent, which resumes from its durable state: only
  the pages in flight at the kill are fetched twice, at the price of a gap as long as the restart.
- **restart-taken**: the others crawl meanwhile, fetching again what the killed agent had fetched, as
  in a takeover; at the restart the hosts move back with the pages done meanwhile, so what is fetched
  again from then on is far less than a takeover costs. The restarted agent asks the agents that
  crawled its hosts (page recovery), and they push them back to it as their views change: with
  \`--recovery-k 0\` (no asking) the push alone does it, and the two differ by run-to-run noise.
- **join**: hosts move to a newcomer with the pages done there: it asks the previous owners (page
  recovery), and they push the hosts they lost to it as their views change. Nothing is fetched twice.
  With \`--recovery-k 0\` the newcomer does not ask and crawls a host at once; the push still brings
  the pages done there, and only a page whose link reaches the newcomer before the push could be
  fetched twice (each agent sends a URL once, so the links to pages already done seldom come again).
- **partition**: each side takes the other for dead. The majority takes the cut-off agent's hosts, as
  after a kill; the cut-off agent, alone in its view, owns every host and crawls those it has URLs for
  (each agent applying its own IP limit: under the cluster's, it would wait at the addresses of the
  other side's authorities for the IP grace, longer than the cut). Both sides fetch pages the other fetched; once joined again, hosts go back to their owners with the
  pages done there (page recovery), and the crawl still ends complete.`;

function checks(points: readonly Point[]): Check[] {
  const at = (name: ScenarioName) => points.find((p) => p.scenario === name);
  const result: Check[] = [
    {
      claim:
        "Self-stabilization: whatever the fault, the crawl ends with every page of the web fetched (UbiCrawler)",
      holds: points.every((p) => p.coverage === 1),
      detail: points.map((p) => `${p.scenario}: ${p.coverage.toFixed(4)}`).join(", "),
    },
  ];
  const join = at("join");
  if (join) {
    result.push({
      claim: "A join fetches nothing twice: the hosts move with the pages done there",
      holds: join.refetched === 0,
      detail: `join: ${join.refetched} pages fetched twice`,
    });
  }
  const joinBare = at("join-no-recovery");
  if (join && joinBare) {
    result.push({
      claim:
        "Not asking the previous owners (--recovery-k 0), a join still fetches next to nothing twice: they push the hosts with the pages done there",
      holds: joinBare.refetched <= joinBare.fetches / 100,
      detail: `fetched twice: ${joinBare.refetched} of ${joinBare.fetches} not asking, ${join.refetched} asking (--recovery-k ${DEFAULT_RECOVERY_K})`,
    });
  }
  const held = at("restart-held");
  const takeover = at("takeover");
  if (held && takeover) {
    result.push({
      claim: "Holding a killed agent's hosts for its restart saves the refetches of a takeover",
      holds: held.refetched < takeover.refetched,
      detail: `fetched twice: ${held.refetched} restarted within the grace, ${takeover.refetched} taken over`,
    });
  }
  const taken = at("restart-taken");
  const takenBare = at("restart-taken-no-recovery");
  if (taken?.refetchedOnReturn !== undefined && takeover) {
    result.push({
      claim:
        "At a restart after a takeover, the hosts move back with the pages done meanwhile: far fewer are fetched again from the restart on than a takeover fetches again (page recovery, UbiCrawler)",
      holds: taken.refetchedOnReturn < takeover.refetched / 2,
      detail:
        `fetched again from the restart on: ${taken.refetchedOnReturn}` +
        (takenBare?.refetchedOnReturn === undefined
          ? ""
          : ` (${takenBare.refetchedOnReturn} with --recovery-k 0)`) +
        `; fetched again in a takeover: ${takeover.refetched}`,
    });
  }
  if (takeover?.gapSeconds !== undefined) {
    result.push({
      claim:
        "A dead agent's hosts are crawled again within a few seconds of its death (failure detection: 1.2 s)",
      holds: takeover.gapSeconds <= 5,
      detail: `takeover gap: ${takeover.gapSeconds.toFixed(2)} s`,
    });
  }
  return result;
}
