import { type ExitResult, servedPages, startWebFixture, type WebFixture, waitFor } from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, startClusterAgent } from "../cluster/cluster-harness.js";

/**
 * A 3-agent crawl of a test web with duplicate content, for the export's tests: two agents start, a
 * third joins at 25 % of the pages served, one of the first two is SIGKILLed at 50 % and started again
 * on its data dir; every agent then crawls to the end. The ids are chosen so that a mirror host and the
 * host it copies have different owners: their pages are revisits whose originals are in another agent's
 * WARC files.
 */

/**
 * A small web whose two mirrors serve, byte for byte, two small hosts' pages; slow enough to act
 * mid-crawl: its biggest host's 71 URLs take 7 s at the delay below (123 URLs with 900 pages).
 */
const WEB = { seed: 5, hosts: 24, pages: 480, mirrors: 2, responseDelayMs: 5 } as const;

/**
 * Cross-agent dedup (the test web's flags say local), and 10 requests a second a host: the crawl outlasts the join and the restart (at no
 * delay the joiner could start after the crawl's end and archive nothing).
 */
const DEDUP = ["--dedup", "cluster", "--delay-ms", "100"];

/** What the crawl left. */
export interface CrawledCluster {
  readonly fixture: WebFixture;
  /** The agents' ids. */
  readonly ids: readonly string[];
  /** Their data dirs, by id. */
  readonly dataDirs: ReadonlyMap<string, string>;
  /** How the killed agent's first run ended. */
  readonly killed: ExitResult;
  /** The exits of the agents that ran to the end. */
  readonly exits: readonly ExitResult[];
}

/** Runs the crawl to its end. */
export async function crawlClusterWithDuplicates(): Promise<CrawledCluster> {
  const fixture = await startWebFixture(WEB);
  try {
    const ids = await idsSplittingAMirror(fixture);
    const [firstId, secondId, joinerId] = ids as [string, string, string];
    const truth = fixture.truth().urls.length;
    const served = () => servedPages(fixture.web.recorder).size;
    const first = await startClusterAgent(fixture, { id: firstId, flags: DEDUP });
    const second = await startClusterAgent(fixture, {
      id: secondId,
      join: [first.address],
      seeds: true,
      flags: DEDUP,
    });
    await waitFor(() => served() >= truth * 0.25, "a quarter of the pages", 60_000);
    const joiner = await startClusterAgent(fixture, { id: joinerId, join: [first.address], flags: DEDUP });
    await waitFor(() => served() >= truth * 0.5, "half of the pages", 60_000);
    second.process.kill("SIGKILL");
    const killed = await second.process.waitForExit(10_000);
    const restarted = await startClusterAgent(fixture, {
      id: secondId,
      join: [first.address],
      flags: DEDUP,
    });
    const agents: ClusterAgent[] = [first, joiner, restarted];
    const exits = await Promise.all(agents.map((agent) => agent.process.waitForExit(120_000)));
    return {
      fixture,
      ids,
      dataDirs: new Map(agents.map((agent) => [agent.id, agent.dataDir])),
      killed,
      exits,
    };
  } catch (error) {
    await fixture.stop();
    throw error;
  }
}

/**
 * Three ids under which at least one mirror and the host it copies have different owners, and the
 * third, the joiner, owns the biggest host.
 */
async function idsSplittingAMirror(fixture: WebFixture): Promise<string[]> {
  const { model, port } = fixture.web;
  const pairs = model.mirrorHosts.map((m) => {
    const mirror = model.hosts[m];
    const original = model.hosts[mirror?.mirrorOf as number];
    return [`${original?.name}:${port}`, `${mirror?.name}:${port}`];
  });
  // The joiner owns the biggest host, whose crawl outlasts its join: with only small hosts, all done
  // before it joined on a loaded machine, it archived nothing (seen once on CI).
  const urlsByHost = new Map<string, number>();
  for (const url of fixture.truth().urls) {
    const host = new URL(url).host;
    urlsByHost.set(host, (urlsByHost.get(host) ?? 0) + 1);
  }
  const biggest = [...urlsByHost].sort((x, y) => y[1] - x[1])[0]?.[0] as string;
  for (let k = 0; k < 100; k++) {
    const ids = [`wacz-${k}a`, `wacz-${k}b`, `wacz-${k}c`];
    const assignment = await assignmentOf(ids);
    if (
      assignment.ownerOf(biggest) === ids[2] &&
      pairs.some(([a, b]) => assignment.ownerOf(a as string) !== assignment.ownerOf(b as string))
    )
      return ids;
  }
  throw new Error("no three ids split a mirror from its host and give the joiner the biggest host");
}
