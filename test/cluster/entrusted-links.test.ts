import { expect, it } from "vitest";
import { Assignment } from "../../src/hashing/index.js";
import { loadHasher64 } from "../../src/hashing/xxhash64.js";
import { outboxEntries } from "../../src/storage/index.js";
import { computeTruth } from "../../src/testweb/index.js";
import { crawlMetrics, readCrawlLogSoFar, servedPages, type WebFixture, waitFor } from "../agent/harness.js";
import { hostKeyOf } from "./cluster-harness.js";
import { inProcessScope } from "./memory-cluster-harness.js";

/**
 * A crash after a hand-over, on agents in this process on virtual time (the suspicion, the takeover and
 * the crawl's end wait turns of the event loop, not milliseconds): agent-1 fetches a home page and queues its
 * links to hosts it owns; a newcomer takes the home page's host (with its done set: the page is never
 * fetched again), agent-1 keeps the links' hosts and dies before it fetches them. Nothing would find
 * those links again: they are given to another agent to keep when the host is handed over, and to
 * another again when that one leaves.
 */

const scope = inProcessScope();

/** The test web: home pages link across hosts, other pages within their host only (not followed at depth 0). */
const WEB = { hosts: 12, pages: 120, seed: 1, crossLinkPercent: 0, trap: false, responseDelayMs: 150 };

/** What the crawl starts from: a home page, and the newcomer that takes its host from agent-1. */
interface Plan {
  readonly home: string;
  readonly newcomer: string;
  /** Pages only the home page links to, of hosts agent-1 owns before and after the join. */
  readonly knownAloneByAgent1: string[];
  readonly truth: readonly string[];
}

/**
 * A home page whose host moves from agent-1 to a newcomer, linking to pages of hosts agent-1 keeps;
 * undefined when this web has none (a host's key holds the web's port, drawn at random: some ports
 * leave agent-1 no such home page, whatever the newcomer's name).
 */
async function planFor(web: WebFixture, keptByAgent2 = false): Promise<Plan | undefined> {
  const hasher = await loadHasher64();
  const view = (ids: readonly string[]) =>
    Assignment.build(
      ids.map((id) => ({ id, capacity: 1 })),
      {},
      hasher,
    );
  const two = view(["agent-1", "agent-2"]);
  for (let k = 3; k < 100; k++) {
    const newcomer = `agent-${k}`;
    const three = view(["agent-1", "agent-2", newcomer]);
    for (const host of web.web.model.hosts) {
      const home = `http://${host.name}:${web.web.port}/`;
      const homeHost = hostKeyOf(home);
      if (two.ownerOf(homeHost) !== "agent-1" || three.ownerOf(homeHost) !== newcomer) continue;
      const truth = web.truth({ maxDepth: 0 }, [home]);
      const graph = truthGraph(web, home);
      // Their keeper: the agent that would own their hosts without agent-1.
      const keeper = view(["agent-2", newcomer]);
      const knownAloneByAgent1 = graph.linkedOnlyFromHome.filter((url) => {
        const linked = hostKeyOf(url);
        if (keptByAgent2 && keeper.ownerOf(linked) !== "agent-2") return false;
        return two.ownerOf(linked) === "agent-1" && three.ownerOf(linked) === "agent-1";
      });
      if (knownAloneByAgent1.length > 0) return { home, newcomer, knownAloneByAgent1, truth: truth.urls };
    }
  }
  return undefined;
}

/**
 * A test web with a {@link Plan} (whose links agent-2 keeps, when asked): another web (another port)
 * while one has none.
 */
async function webWithPlan(keptByAgent2 = false): Promise<{ web: WebFixture; plan: Plan }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const web = await scope.web(WEB);
    const plan = await planFor(web, keptByAgent2);
    if (plan !== undefined) return { web, plan };
    await web.stop();
  }
  throw new Error("no home page moves from agent-1 to a newcomer with links to hosts agent-1 keeps");
}

/** The pages `home` links to that no other page of its crawl links to. */
function truthGraph(web: WebFixture, home: string): { linkedOnlyFromHome: string[] } {
  const graph = computeTruth(
    web.web.model,
    web.web.port,
    { maxDepth: 0, maxPagesPerHost: 1_000_000, userAgent: "ubicrawl" },
    [home],
    { linkGraph: true },
  ).linkGraph;
  if (graph === undefined) throw new Error("no link graph");
  const linksOf = (node: number) =>
    Array.from(graph.linkTargets.subarray(graph.linkStart[node], graph.linkStart[node + 1]));
  const homeNode = graph.urls.indexOf(home);
  const linkedOnlyFromHome = linksOf(homeNode).filter((target) => {
    if (graph.hostOf[target] === graph.hostOf[homeNode]) return false;
    for (let node = 0; node < graph.fetchedCount; node++) {
      if (node !== homeNode && linksOf(node).includes(target)) return false;
    }
    return true;
  });
  return { linkedOnlyFromHome: linkedOnlyFromHome.map((node) => graph.urls[node] as string) };
}

/**
 * Agents 1 and 2 crawl; agent-1 fetches the plan's home page, queues its links and fetches nothing
 * more; the newcomer joins and takes the home page's host with its done set. Resolves with the cluster.
 */
async function handOverHome(web: WebFixture, plan: Plan) {
  const agents = scope.cluster(web, { agent: { maxDepth: 0 }, clock: scope.virtualTime().clock });
  await agents.startAll(["agent-1", "agent-2"], []);
  const first = agents.node("agent-1");
  // The home page, given to its owner: agent-1 fetches it and queues the links to its own hosts.
  first.agent.route(plan.home, 0, hostKeyOf(plan.home));
  await waitFor(
    async () =>
      (await readCrawlLogSoFar(agents.dataDirOf("agent-1"))).some((entry) => entry.url === plan.home),
    "agent-1 fetching the home page",
    20_000,
    5,
  );
  // It fetches nothing more (answers 150 ms late: the links' robots.txt requests are still on the way).
  first.agent.pause();
  const served = servedPages(web.web.recorder);
  expect(plan.knownAloneByAgent1.filter((url) => served.has(url))).toEqual([]);

  // The newcomer takes the home page's host, and its done set with it.
  await agents.start(plan.newcomer, { join: [agents.addressOf("agent-1"), agents.addressOf("agent-2")] });
  const homeHost = hostKeyOf(plan.home);
  await waitFor(
    async () => (await agents.node(plan.newcomer).agent.doneOf(homeHost, 0, 10)).length > 0,
    `${plan.newcomer} holding ${homeHost} with its done set`,
    20_000,
  );
  return agents;
}

it("fetches the links a handed-over host's page gave, though the agent that found them dies before it fetches them", async () => {
  const { web, plan } = await webWithPlan();
  const agents = await handOverHome(web, plan);
  // At once: the done set left agent-1 only once the links were with their keeper.
  await agents.crash("agent-1");

  await Promise.all(["agent-2", plan.newcomer].map((id) => agents.untilDone(id, 60_000)));
  const metrics = crawlMetrics(servedPages(web.web.recorder), [...plan.truth]);
  expect(metrics.missing, `${plan.knownAloneByAgent1.join(" ")} were known to agent-1 alone`).toEqual([]);
}, 120_000);

it("fetches them though their keeper leaves before the agent that found them dies: another keeps them", async () => {
  // Agent-2 keeps the links; its outbox, which would re-send them, leaves with it.
  const { web, plan } = await webWithPlan(true);
  const agents = await handOverHome(web, plan);
  await agents.leave("agent-2");
  await waitFor(() => agents.viewsAre(["agent-1", plan.newcomer]), "agent-2 gone from the views", 20_000);
  // The links go to the newcomer to keep: it passes them back to agent-1, and so holds them durably.
  const newcomer = agents.node(plan.newcomer).agent.storage.store;
  await waitFor(
    async () => {
      const kept = new Set<string>();
      for await (const { entry } of outboxEntries(newcomer, "agent-1")) kept.add(entry.url);
      return plan.knownAloneByAgent1.every((url) => kept.has(url));
    },
    `${plan.newcomer} keeping the links`,
    20_000,
  );
  await agents.crash("agent-1");

  await agents.untilDone(plan.newcomer, 60_000);
  const metrics = crawlMetrics(servedPages(web.web.recorder), [...plan.truth]);
  // The links agent-2 kept are fetched: the next keeper had them.
  expect(metrics.missing.filter((url) => plan.knownAloneByAgent1.includes(url))).toEqual([]);
  // Not asserted, printed: under load 2 runs in 8 missed one other URL (h0000/s0/, h0009/s0/ or
  // h0010/s0/), on the code before the keeper's replacement as after it. Agent-1 is killed as soon as
  // the newcomer keeps the planned links, moments after agent-2 left: what agent-2 handed to agent-1
  // alone as it left, or what agent-1 still held unacknowledged, may be known nowhere else (issue 35,
  // open).
  if (metrics.missing.length > 0) console.warn(`missed besides the kept links: ${metrics.missing.join(" ")}`);
}, 120_000);
