import { afterEach, describe, expect, it } from "vitest";
import { IDENTICAL_PAYLOAD_PROFILE } from "../../src/storage/index.js";
import {
  crawlMetrics,
  logEvent,
  readCrawlLogOf,
  readWarcRecords,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WarcRecordIn,
  type WebFixture,
} from "../agent/harness.js";
import { assignmentOf, type ClusterAgent, hostKeyOf, startClusterAgent } from "../cluster/cluster-harness.js";

/** A small web whose two mirrors serve, byte for byte, two small hosts' pages. */
const WEB = { seed: 5, hosts: 24, pages: 900, mirrors: 2 } as const;

let fixture: WebFixture | undefined;
afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

/** The records of every agent, each with the agent that wrote it. */
async function recordsOf(dataDirs: Record<string, string>): Promise<(WarcRecordIn & { agent: string })[]> {
  const all: (WarcRecordIn & { agent: string })[] = [];
  for (const [agent, dir] of Object.entries(dataDirs)) {
    for (const record of await readWarcRecords(dir)) all.push({ ...record, agent });
  }
  return all;
}

/** `HTTP/1.1 200 …` of a response or revisit record's block. */
function statusOf(record: WarcRecordIn): number {
  return Number(Buffer.from(record.block.subarray(0, 16)).toString("latin1").split(" ")[1]);
}

/**
 * Checks, with warcio's reading of the files, that each successful payload is stored in at most one
 * response record per agent (a race of agents that could not ask its owner in time may leave one copy
 * each, counted) and that every revisit resolves to one of them; returns the revisits, the responses by
 * digest and the copies (responses beyond each payload's first).
 */
function checkStoredOncePerAgent(records: readonly (WarcRecordIn & { agent: string })[]) {
  const responses = records.filter(
    (r) => r.type === "response" && statusOf(r) < 300 && r.headers.get("warc-truncated") === undefined,
  );
  const byDigest = new Map<string, (WarcRecordIn & { agent: string })[]>();
  for (const response of responses) {
    const digest = response.headers.get("warc-payload-digest") as string;
    byDigest.set(digest, [...(byDigest.get(digest) ?? []), response]);
  }
  const storedTwiceByOneAgent = [...byDigest.values()].filter(
    (list) => new Set(list.map((r) => r.agent)).size < list.length,
  );
  expect(
    storedTwiceByOneAgent.map((list) => list.map((r) => `${r.agent} ${r.headers.get("warc-target-uri")}`)),
    "payloads stored in more than one response record by one agent",
  ).toEqual([]);
  const copies = [...byDigest.values()].reduce((sum, list) => sum + list.length - 1, 0);
  const revisits = records.filter((r) => r.type === "revisit");
  for (const revisit of revisits) {
    expect(revisit.headers.get("warc-profile")).toBe(IDENTICAL_PAYLOAD_PROFILE);
    const original = byDigest
      .get(revisit.headers.get("warc-payload-digest") as string)
      ?.find((r) => r.headers.get("warc-record-id") === revisit.headers.get("warc-refers-to"));
    expect(original, `the original of ${revisit.headers.get("warc-target-uri")}`).toBeDefined();
    expect(revisit.headers.get("warc-refers-to-target-uri")).toBe(original?.headers.get("warc-target-uri"));
    expect(revisit.headers.get("warc-refers-to-date")).toBe(original?.headers.get("warc-date"));
  }
  return { revisits, byDigest, copies };
}

describe("duplicate content", () => {
  it("is stored once per agent at most across two agents owning a host and its mirror, a copy a race left counted; the other copies are revisit records that resolve to it", async () => {
    fixture = await startWebFixture(WEB);
    const { model } = fixture.web;
    // Two ids under which at least one mirror and its host have different owners.
    const port = fixture.web.port;
    const pairs = model.mirrorHosts.map((m) => {
      const mirror = model.hosts[m];
      const original = model.hosts[mirror?.mirrorOf as number];
      return [`${original?.name}:${port}`, `${mirror?.name}:${port}`];
    });
    let ids: [string, string] | undefined;
    for (let k = 0; k < 50 && ids === undefined; k++) {
      const candidate: [string, string] = [`dedup-${k}a`, `dedup-${k}b`];
      const assignment = await assignmentOf(candidate);
      if (pairs.some(([a, b]) => assignment.ownerOf(a) !== assignment.ownerOf(b))) ids = candidate;
    }
    if (ids === undefined) throw new Error("no pair of ids splits a mirror from its host");
    // --dedup cluster, the agents' default (the test web's flags say local: see testWebAgentFlags).
    const dedup = ["--dedup", "cluster"];
    const first: ClusterAgent = await startClusterAgent(fixture, { id: ids[0], flags: dedup });
    const second = await startClusterAgent(fixture, {
      id: ids[1],
      join: [first.address],
      seeds: true,
      flags: dedup,
    });
    const results = await Promise.all([first, second].map((agent) => agent.process.waitForExit(90_000)));
    for (const result of results) expect(result.code, result.stderr).toBe(0);

    // Every page fetched, mirrors included, as the ground truth says.
    const truth = fixture.truth();
    expect(crawlMetrics(servedPages(fixture.web.recorder), truth.urls).coverage).toBe(1);
    const mirrorUrls = truth.urls.filter((url) => new URL(url).hostname.startsWith("mirror"));
    expect(mirrorUrls.length).toBeGreaterThan(20);

    const records = await recordsOf({ [first.id]: first.dataDir, [second.id]: second.dataDir });
    const { revisits, byDigest, copies } = checkStoredOncePerAgent(records);
    // Each mirror page that answered 200 is a revisit of its host's page, or the other way round.
    const pairHosts = new Set<string>(pairs.flat());
    const onPair = (r: WarcRecordIn) => pairHosts.has(hostKeyOf(r.headers.get("warc-target-uri") as string));
    const mirrorPages = records.filter(
      (r) =>
        (r.type === "response" || r.type === "revisit") &&
        statusOf(r) === 200 &&
        new URL(r.headers.get("warc-target-uri") as string).hostname.startsWith("mirror"),
    );
    expect(revisits.filter(onPair).length).toBeGreaterThanOrEqual(mirrorPages.length);
    // Across agents: a revisit written by one agent refers to a response the other one stored.
    const across = revisits.filter((revisit) => {
      const original = byDigest
        .get(revisit.headers.get("warc-payload-digest") as string)
        ?.find((r) => r.headers.get("warc-record-id") === revisit.headers.get("warc-refers-to"));
      return original !== undefined && original.agent !== revisit.agent;
    });
    expect(across.length).toBeGreaterThan(5);

    // The crawl logs and the stats say the same: each revisit is a line with duplicateOf, and the
    // agents counted them, with the bytes saved and the messages it took.
    const logs = [...(await readCrawlLogOf(first.dataDir)), ...(await readCrawlLogOf(second.dataDir))];
    expect(logs.filter((entry) => entry.duplicateOf !== undefined)).toHaveLength(revisits.length);
    const stopped = results.map((result) => logEvent(result.stderr, "stopped"));
    const sum = (field: string) => stopped.reduce((total, record) => total + Number(record?.[field] ?? 0), 0);
    expect(sum("duplicates")).toBe(revisits.length);
    // Copies a race left (none on a quiet machine; some when an owner is slow to answer) are each
    // counted by the digest's owner, and each was stored without its answer.
    expect(sum("payloadCopies")).toBe(copies);
    expect(sum("payloadsUnchecked")).toBeGreaterThanOrEqual(copies);
    expect(sum("duplicateBytes")).toBeGreaterThan(revisits.length * 100);
    const pages = sum("pagesFetchedThisRun");
    const messages = sum("digestMessages");
    expect(messages).toBeGreaterThan(0);
    // Batched: far fewer messages than pages (each page asks once, and its claim is settled once).
    expect(messages).toBeLessThan(pages);
  }, 150_000);

  it("stores every payload whole with --dedup off, and within one agent with --dedup local", async () => {
    fixture = await startWebFixture(WEB);
    const off = spawnAgent(fixture, { id: "off", flags: ["--dedup", "off"] });
    const local = spawnAgent(fixture, { id: "local", flags: ["--dedup", "local"] });
    const [offResult, localResult] = await Promise.all([off.waitForExit(90_000), local.waitForExit(90_000)]);
    expect(offResult.code, offResult.stderr).toBe(0);
    expect(localResult.code, localResult.stderr).toBe(0);
    const dirs = { off: `${fixture.dir}/data-off`, local: `${fixture.dir}/data-local` };
    const offRecords = await recordsOf({ off: dirs.off });
    expect(offRecords.filter((r) => r.type === "revisit")).toEqual([]);
    const localRecords = await recordsOf({ local: dirs.local });
    const { revisits, copies: localCopies } = checkStoredOncePerAgent(localRecords);
    expect(localCopies).toBe(0);
    // The same exchanges, fewer bytes: every revisit stands for a response the other agent stored whole.
    const countOf = (records: readonly WarcRecordIn[], type: string) =>
      records.filter((r) => r.type === type).length;
    expect(countOf(localRecords, "response") + revisits.length).toBe(countOf(offRecords, "response"));
    expect(revisits.length).toBeGreaterThan(20);
    expect(logEvent(localResult.stderr, "stopped")?.digestMessages).toBeUndefined();
    // URL aliases: on each host, `/` and `/index.html` (and the session-id and tracking-parameter
    // aliases) carry the same payload, stored once; the other is a revisit.
    const target = (r: WarcRecordIn) => new URL(r.headers.get("warc-target-uri") as string);
    const homes = localRecords.filter(
      (r) =>
        (r.type === "response" || r.type === "revisit") &&
        ["/", "/index.html"].includes(target(r).pathname) &&
        // A mirror's home pages are both revisits of its host's.
        !target(r).hostname.startsWith("mirror"),
    );
    const hostsWithBoth = new Set(
      homes.filter((r) => target(r).pathname === "/index.html").map((r) => target(r).host),
    );
    expect(hostsWithBoth.size).toBeGreaterThan(10);
    for (const host of hostsWithBoth) {
      const types = homes.filter((r) => target(r).host === host).map((r) => r.type);
      expect(types.sort(), host).toEqual(["response", "revisit"]);
    }
    for (const parameter of ["sessionid", "utm_source"]) {
      expect(revisits.some((r) => target(r).searchParams.has(parameter))).toBe(true);
    }
    // A copy under the same base as a first copy this agent fetched has its links read once, with the
    // first copy; a mirror's copy (another origin: other URLs) is read for its links.
    const lines = await readCrawlLogOf(dirs.local);
    const copies = lines.filter((entry) => typeof entry.duplicateOf === "string");
    const dirOf = (url: string) => url.slice(0, url.lastIndexOf("/") + 1);
    const sameBase = copies.filter((entry) => dirOf(entry.url) === dirOf(entry.duplicateOf as string));
    const otherOrigin = copies.filter(
      (entry) =>
        new URL(entry.url).origin !== new URL(entry.duplicateOf as string).origin &&
        entry.contentType === "text/html",
    );
    expect(sameBase.length).toBeGreaterThan(10);
    expect(sameBase.every((entry) => entry.links === 0)).toBe(true);
    expect(otherOrigin.length).toBeGreaterThan(10);
    expect(otherOrigin.filter((entry) => entry.links > 0).length).toBeGreaterThan(otherOrigin.length / 2);
  }, 150_000);
});
