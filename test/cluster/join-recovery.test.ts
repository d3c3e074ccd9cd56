import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { AgentOptions } from "../../src/agent/agent-options.js";
import { ClusterNode, type ClusterOptions } from "../../src/cluster/index.js";
import { Assignment } from "../../src/hashing/index.js";
import {
  type ClaimReply,
  type ClaimRequest,
  type HandOverReply,
  type HandOverRequest,
  INSECURE,
} from "../../src/transport/index.js";
import { hostKey } from "../../src/url/index.js";
import { inProcessAgentOptions, waitFor } from "../agent/harness.js";

/**
 * Host hand-overs after a join: an agent that joins a crawl in progress claims each host it now owns
 * from the agents that owned it before, which pass the host on with the pages they fetched there, so
 * no page is fetched twice. A claim is per host, once: never a query per page batch all crawl long.
 */

const HOSTS = 6;
const PAGES_PER_HOST = 6;

let dir: string;
let server: Server;
const nodes: ClusterNode[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ubicrawl-join-recovery-"));
});

afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

/**
 * Names of {@link HOSTS} hosts on `port` of which agents "a" and "b" own at least two each when both are
 * alive: host keys include the port, so a fixed list of names could (a few runs in a hundred) all hash
 * to one agent, and the test would not be testing two agents.
 */
async function hostNames(port: number): Promise<string[]> {
  const assignment = await Assignment.load([{ id: "a" }, { id: "b" }]);
  const names: string[] = [];
  const owned = new Map<string, number>();
  for (let i = 0; names.length < HOSTS; i++) {
    const name = `h${i}.join.test`;
    const owner = assignment.ownerOf(hostKey(`http://${name}:${port}/`));
    const count = owned.get(owner) ?? 0;
    if (count >= HOSTS - 2) continue; // leaves two hosts for the other agent
    names.push(name);
    owned.set(owner, count + 1);
  }
  return names;
}

/** {@link HOSTS} hosts, each a chain / → /1 → … → /5; the first one's home links every home. */
async function startWeb(): Promise<{ seeds: string[]; hostsFile: string; served: () => string[] }> {
  const served: string[] = [];
  let names: string[] = [];
  server = createServer((request, response) => {
    const host = request.headers.host ?? "";
    const path = request.url ?? "/";
    if (path === "/robots.txt") {
      response.writeHead(404).end();
      return;
    }
    served.push(`${host}${path}`);
    const step = path === "/" ? 0 : Number(path.slice(1));
    let body = step + 1 < PAGES_PER_HOST ? `<a href="/${step + 1}">next</a>` : "<p>end</p>";
    if (host.startsWith(`${names[0]}:`) && step === 0) {
      const port = (server.address() as AddressInfo).port;
      for (const name of names.slice(1)) body += `<a href="http://${name}:${port}/">${name}</a>`;
    }
    response.writeHead(200, { "content-type": "text/html" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  names = await hostNames(port);
  const hostsFile = join(dir, "hosts");
  await writeFile(hostsFile, names.map((name) => `127.0.0.1 ${name}\n`).join(""));
  return { seeds: [`http://${names[0]}:${port}/`], hostsFile, served: () => served };
}

function agentOptions(id: string, hostsFile: string, seeds: string[], delayMs: number): AgentOptions {
  // The web's pages are counted one by one (HOSTS × PAGES_PER_HOST): no /sitemap.xml.
  return inProcessAgentOptions(
    { id, dataDir: join(dir, `data-${id}`), seeds, hostsFile },
    { delayMs, sitemaps: "off" },
  );
}

function clusterOptions(joinAddresses: string[]): ClusterOptions {
  return {
    listen: "127.0.0.1:0",
    join: joinAddresses,
    capacity: 1,
    heartbeatIntervalMs: 100,
    suspectAfterMs: 1_000,
    recoveryK: 2,
    takeoverDelayMs: 0,
    security: INSECURE,
  };
}

/** Counts the hosts `node` is asked to hand over (claims it answers). */
function countQueries(node: ClusterNode): () => number {
  let queries = 0;
  const answer = node.handlers.claimHosts;
  node.handlers.claimHosts = (request: ClaimRequest): Promise<ClaimReply> => {
    queries += request.hosts.length;
    return answer(request);
  };
  return () => queries;
}

/** Counts the hosts pushed to `node` (by an agent that held them when it learnt they are `node`'s). */
function countPushes(node: ClusterNode): () => number {
  let pushed = 0;
  const takeIn = node.handlers.handOverHosts;
  node.handlers.handOverHosts = (request: HandOverRequest): Promise<HandOverReply> => {
    pushed += request.hosts.length;
    return takeIn(request);
  };
  return () => pushed;
}

const fetchedInAll = () => nodes.reduce((sum, node) => sum + node.agent.stats.pagesFetched, 0);

it("claims each of its hosts once when it joined before any agent had work, and fetches each page once", async () => {
  const web = await startWeb();
  const first = await ClusterNode.start(agentOptions("a", web.hostsFile, [], 0), clusterOptions([]));
  nodes.push(first);
  const queries = countQueries(first);
  const second = await ClusterNode.start(
    agentOptions("b", web.hostsFile, web.seeds, 0),
    clusterOptions([first.address]),
  );
  nodes.push(second);

  await waitFor(() => fetchedInAll() === HOSTS * PAGES_PER_HOST, "the whole web fetched", 20_000);
  expect(queries()).toBeGreaterThan(0);
  expect(queries()).toBeLessThanOrEqual(HOSTS);
  expect(new Set(web.served()).size).toBe(web.served().length);
  expect(first.agent.stats.pagesFetched).toBeGreaterThan(0);
  expect(second.agent.stats.pagesFetched).toBeGreaterThan(0);
});

it("is handed over the hosts the others crawled when it joins a crawl in progress: no page twice", async () => {
  const web = await startWeb();
  // Slow enough (a politeness delay) that most of the crawl is left when the second agent joins.
  const first = await ClusterNode.start(agentOptions("a", web.hostsFile, web.seeds, 150), clusterOptions([]));
  nodes.push(first);
  const queries = countQueries(first);
  // A page of a host that b will own is fetched by a first: there is something to hand over.
  const owners = await Assignment.load([{ id: "a" }, { id: "b" }]);
  await waitFor(
    () => web.served().some((page) => owners.ownerOf(page.slice(0, page.indexOf("/"))) === "b"),
    "a page of one of b's future hosts",
  );
  const second = await ClusterNode.start(
    agentOptions("b", web.hostsFile, [], 150),
    clusterOptions([first.address]),
  );
  nodes.push(second);
  const pushes = countPushes(second);

  await waitFor(() => fetchedInAll() === HOSTS * PAGES_PER_HOST, "the whole web fetched", 30_000);
  expect(second.agent.stats.pagesFetched).toBeGreaterThan(0);
  // The hosts b owns that a crawled came over: claimed by b, or pushed by a once it learnt of b.
  expect(queries() + pushes()).toBeGreaterThan(0);
  expect(second.agent.stats.pagesRecovered).toBeGreaterThan(0);
  expect(new Set(web.served()).size).toBe(web.served().length);
});
