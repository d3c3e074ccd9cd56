import { describe, expect, it } from "vitest";
import { Assignment } from "../../src/hashing/index.js";
import type { TestWebOptions } from "../../src/testweb/index.js";
import { readCrawlLogSoFar, type WebFixture, waitFor } from "../agent/harness.js";
import { recordingLogger } from "../support/recording-logger.js";
import { inProcessScope, type MemoryCluster } from "./memory-cluster-harness.js";

/**
 * The cluster-wide per-IP limit, on agents in this process (a MemoryNetwork between them: the IP
 * authority's leases travel as real, validated messages). A crash of the address's authority is a stop
 * without a word; what a SIGKILL loses besides is not at stake here. The real-process test of the limit
 * (a 429 held across agents, the leases' messages) is ip-politeness-429.test.ts.
 *
 * Six hosts of 16 on one address (shared hosting), ~100 pages there; responses take a little time, so
 * requests overlap. The address's requests set the crawl's length: ~10 a second before a slot's release
 * bounded its start under a host's Crawl-delay (0.01 s in this web), and waiting agents polled; about
 * twice that since (waiting in the address's line at its authority).
 */
const SHARED_WEB = { hosts: 16, pages: 160, seed: 3, responseDelayMs: 5, ipGroups: [{ hosts: 6 }] };

/** `--max-per-ip 2` cluster-wide, and a short whole-fetch deadline (a crashed holder's slot lasts that long). */
const IP_LIMITED = { agent: { maxPerIp: 2, fetchTimeoutMs: 4000 }, cluster: { ipLimit: "cluster" } } as const;

const IDS = ["a", "b", "c", "d"];

const scope = inProcessScope();

/** Four agents crawling `web` under the cluster-wide limit: the last to join has the seeds. */
async function startFour(web: WebFixture): Promise<MemoryCluster> {
  const agents = scope.cluster(web, IP_LIMITED);
  await agents.startAll(IDS, web.web.seeds);
  return agents;
}

/** Runs every running agent to the crawl's end (their crawl logs whole once they stopped). */
async function runToEnd(agents: MemoryCluster): Promise<void> {
  await agents.runToEnd([...agents.nodes.keys()], 60_000);
}

/**
 * A test web of `options` with a host that `fits` (given its key, its address and how many hosts share
 * that address), and the address of the biggest such host. A host's key holds the web's port, drawn at
 * random, and so does its owner: a web with none (one in ten, for a host owned by its address's
 * authority among 8) is stopped, and another started.
 */
async function webWithHost(
  options: TestWebOptions,
  fits: (key: string, ip: string, hostsAtIp: number) => boolean,
): Promise<{ fixture: WebFixture; ip: string }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const fixture = await scope.web(options);
    const { model } = fixture.web;
    const pagesOf = new Map<string, number>();
    for (const url of fixture.truth().urls)
      pagesOf.set(new URL(url).host, (pagesOf.get(new URL(url).host) ?? 0) + 1);
    const hostsAt = new Map<string, number>();
    for (const host of model.hosts) hostsAt.set(host.ip, (hostsAt.get(host.ip) ?? 0) + 1);
    const ipOf = (key: string) =>
      model.hosts[model.hostIndexByName.get(new URL(`http://${key}`).hostname) ?? -1]?.ip;
    const [ip] = [...pagesOf]
      .sort((x, y) => y[1] - x[1])
      .map(([key]) => [key, ipOf(key)] as const)
      .filter(([key, at]) => at !== undefined && fits(key, at, hostsAt.get(at) ?? 0))
      .map(([, at]) => at as string);
    if (ip !== undefined) return { fixture, ip };
    await fixture.stop();
  }
  throw new Error("no test web of 20 had a host that fits");
}

/** The agents among `ids` whose crawl logs have pages of hosts at `ip`. */
async function agentsAt(agents: MemoryCluster, ids: readonly string[], ip: string): Promise<string[]> {
  const { model } = agents.web.web;
  const atIp = (url: string) =>
    model.hosts[model.hostIndexByName.get(new URL(url).hostname) ?? -1]?.ip === ip;
  const found: string[] = [];
  for (const id of ids) {
    const entries = await readCrawlLogSoFar(agents.dataDirOf(id));
    if (entries.some((entry) => entry.status > 0 && atIp(entry.url))) found.push(id);
  }
  return found;
}

describe("per-IP politeness across the cluster", () => {
  it("4 agents crawling 6 hosts on one address never have more than --max-per-ip requests at once there", async () => {
    const fixture = await scope.web(SHARED_WEB);
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const agents = await startFour(fixture);
    await runToEnd(agents);

    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(fixture.web.recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
    // The address's hosts were crawled by several agents: the limit held across them.
    expect((await agentsAt(agents, IDS, ip)).length).toBeGreaterThanOrEqual(2);
  });

  it("holds the limit through a crash of the address's authority mid-crawl, with full coverage", async () => {
    const fixture = await scope.web(SHARED_WEB);
    const truth = fixture.truth();
    const recorder = fixture.web.recorder;
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const agents = await startFour(fixture);
    const assignment = await Assignment.load(IDS.map((id) => ({ id, capacity: 1 })));
    const victim = assignment.ownerOfRareKey(ip);
    await waitFor(() => agents.missing().length <= truth.urls.length * 0.7, "30% of the crawl", 30_000);
    // A crash is a stop without a word: the others find it gone within the suspicion timeout. The stop
    // itself may wait for the victim's requests (up to 10 s), during which the others go on.
    const crashing = agents.crash(victim);
    const missingAtCrash = agents.missing().length;
    await crashing;
    await runToEnd(agents);

    const metrics = agents.metrics();
    expect(missingAtCrash).toBeGreaterThan(0);
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
    const survivors = IDS.filter((id) => id !== victim);
    expect((await agentsAt(agents, survivors, ip)).length).toBeGreaterThanOrEqual(2);
  });

  it("goes on within the suspicion timeout at an address leased to a live agent when its authority crashes", async () => {
    // Each host on an address of its own, crawled for a while: an address's only user holds its lease.
    // The biggest host whose address is its own and whose address's authority is not its owner.
    const assignment = await Assignment.load(IDS.map((id) => ({ id, capacity: 1 })));
    const { fixture, ip } = await webWithHost(
      { hosts: 6, pages: 1_500, seed: 5, responseDelayMs: 5 },
      (key, ip, hostsAtIp) => hostsAtIp === 1 && assignment.ownerOf(key) !== assignment.ownerOfRareKey(ip),
    );
    const victim = assignment.ownerOfRareKey(ip);
    const recorder = fixture.web.recorder;
    const agents = await startFour(fixture);
    await waitFor(() => recorder.gapsAtIp(ip).length >= 30, "30 requests at the address", 30_000);
    const startsAtCrash = recorder.gapsAtIp(ip).length;
    await agents.crash(victim);
    await runToEnd(agents);

    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    const after = recorder.gapsAtIp(ip).slice(startsAtCrash);
    expect(after.length, "requests at the address after the crash").toBeGreaterThan(5);
    // Its user said it held the crashed authority's lease there: the address goes on once the others
    // found the crash (0.4 s here), not after the grace (a lease, a slot's life and the suspicion: 11.4 s).
    // The bound sits between the two: a clean-clone CI run on a loaded machine once went past 4 s.
    console.log(
      `${after.length} starts at the address after the crash, ${Math.round(Math.max(...after))} ms apart at most`,
    );
    expect(Math.max(...after), "the longest gap between starts there after the crash, ms").toBeLessThan(
      6_000,
    );
  });

  it("goes on at once at its own address when a crashed agent, that address's authority, is restarted on its data", async () => {
    // Each host on an address of its own. The victim crawls a host whose address it is the authority
    // of, under its own lease; it crashes, and comes back (same id, new incarnation) as soon as the others
    // found it gone, as a supervisor restarts it. The address's interim authority counted the crashed
    // incarnation's lease as still running, and hands that back with the address: the new incarnation,
    // alone there, must not wait for its own predecessor's requests (dead with its process) — the
    // grace of a crash, a lease and a slot's life (5 + 4 + 0.4 s here; over a minute at the defaults).
    // The biggest host whose owner is its address's authority.
    const assignment = await Assignment.load(IDS.map((id) => ({ id, capacity: 1 })));
    const { fixture, ip } = await webWithHost(
      { hosts: 8, pages: 2_400, seed: 5, responseDelayMs: 5, sharedAddressPercent: 0 },
      (key, ip) => assignment.ownerOf(key) === assignment.ownerOfRareKey(ip),
    );
    const victim = assignment.ownerOfRareKey(ip);
    const recorder = fixture.web.recorder;
    const agents = await startFour(fixture);
    await waitFor(() => recorder.gapsAtIp(ip).length >= 30, "30 requests at the address", 30_000);
    await agents.crash(victim);
    const others = IDS.filter((id) => id !== victim);
    await waitFor(
      () => others.every((id) => agents.node(id).alive.every((member) => member.id !== victim)),
      "the others to find the victim gone",
      10_000,
    );
    // The host's new owner asks the address's interim authority, which takes the address over from the
    // others' reports of the crash.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const startsAtRestart = recorder.gapsAtIp(ip).length;
    await agents.start(victim, { join: [agents.addressOf(others[0] as string)] });
    await runToEnd(agents);

    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    const after = recorder.gapsAtIp(ip).slice(startsAtRestart);
    expect(after.length, "requests at the address after the restart").toBeGreaterThan(5);
    // The first gap spans the crash, the others' finding it (0.4 s), two seconds and the restart (~3 s);
    // waited out, the crashed incarnation's lease would hold it 10.5 s (its lease and a slot's life).
    expect(Math.max(...after), "the longest gap between starts there after the restart, ms").toBeLessThan(
      6_000,
    );
  });

  it("holds the limit when the address's authority is restarted before the others find it gone, going on from their reports", async () => {
    // A supervisor restarts the authority at once, well within the suspicion timeout (6 s here): the
    // others still hold its previous life alive, with the slots it granted them, their requests slow
    // (0.3 s). The new life learns so from its first answer and grants nothing at its addresses until
    // each other agent said what it holds there; the fallback, without reports, is the previous life's
    // last lease and slot (5 + 6 s here).
    const fixture = await scope.web({ ...SHARED_WEB, responseDelayMs: 300, ipGroups: [{ hosts: 4 }] });
    const recorder = fixture.web.recorder;
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const { logger, records } = await recordingLogger({ level: "info" });
    const agents = scope.cluster(fixture, {
      ...IP_LIMITED,
      cluster: { ...IP_LIMITED.cluster, suspectAfterMs: 6_000 },
      logger,
    });
    await agents.startAll(IDS, fixture.web.seeds);
    const assignment = await Assignment.load(IDS.map((id) => ({ id, capacity: 1 })));
    const victim = assignment.ownerOfRareKey(ip);
    await waitFor(() => recorder.gapsAtIp(ip).length >= 8, "8 requests at the shared address", 30_000);
    await agents.crash(victim);
    const startsAtRestart = recorder.gapsAtIp(ip).length;
    await agents.start(victim, { join: [agents.addressOf(IDS.find((id) => id !== victim) as string)] });
    await runToEnd(agents);

    expect(records.filter((record) => record.event === "ip-previous-life")).toHaveLength(1);
    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
    const after = recorder.gapsAtIp(ip).slice(startsAtRestart);
    expect(after.length, "requests at the address after the restart").toBeGreaterThan(5);
    expect(Math.max(...after), "the longest gap between starts there after the restart, ms").toBeLessThan(
      5_000,
    );
  });

  it("goes on at once at an address whose authority left gracefully: handed over, not waited out as after a crash", async () => {
    const fixture = await scope.web(SHARED_WEB);
    const recorder = fixture.web.recorder;
    const ip = fixture.web.model.hosts[0]?.ip as string;
    const agents = await startFour(fixture);
    const assignment = await Assignment.load(IDS.map((id) => ({ id, capacity: 1 })));
    const leaver = assignment.ownerOfRareKey(ip);
    await waitFor(() => recorder.gapsAtIp(ip).length >= 20, "20 requests at the shared address", 30_000);
    const outcome = await agents.leave(leaver);
    expect(outcome).toMatchObject({ hostsNotHanded: 0, urlsNotHanded: 0 });
    const startsAtLeave = recorder.gapsAtIp(ip).length;
    await runToEnd(agents);

    const metrics = agents.metrics();
    expect(metrics.missing).toEqual([]);
    expect(metrics.coverage).toBe(1);
    expect(recorder.maxConcurrencyAtIp(ip)).toBeLessThanOrEqual(2);
    const after = recorder.gapsAtIp(ip).slice(startsAtLeave);
    expect(after.length, "requests at the address after the leave").toBeGreaterThan(5);
    // An authority gone without a word is waited out for a lease, a slot's life and the suspicion
    // timeout (5 + 6 + 0.4 s here) before its address is used again; handed over, it is not.
    expect(Math.max(...after), "the longest gap between starts there after the leave, ms").toBeLessThan(
      3_000,
    );
  });
});
