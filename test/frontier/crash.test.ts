import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { forEachFetched, forEachSeen, readQueue, scanQueues } from "../../src/storage/index.js";
import { type FrontierEnv, openFrontierEnv, sharedFingerprinter } from "./helpers.js";

const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));
const HOSTS = ["h0.test", "h1.test", "h2.test", "h3.test:8080", "h3.test"];

/**
 * The child: adds URLs to five hosts and takes and completes them, committing after each round
 * without waiting (group commit keeps several rounds in flight), and prints one JSON line per round
 * once that round's commit resolved. It never stops on its own; the test SIGKILLs it mid-work.
 */
const CHILD = `
import { StateStore, GroupCommit } from ${JSON.stringify(pathToFileURL(join(DIST, "storage/index.js")).href)};
import { Frontier } from ${JSON.stringify(pathToFileURL(join(DIST, "frontier/index.js")).href)};
import { UrlFingerprinter } from ${JSON.stringify(pathToFileURL(join(DIST, "url/index.js")).href)};
const hosts = ${JSON.stringify(HOSTS)};
const store = await StateStore.open(process.argv[2]);
const committer = new GroupCommit((ops) => store.write(ops));
const frontier = await Frontier.open(
  { queueWindow: 3 },
  { store, committer, fingerprinter: await UrlFingerprinter.create(), onHostReady: () => {} },
);
for (let round = 0; ; round++) {
  const added = [];
  const completed = [];
  for (let k = 0; k < 6; k++) {
    const host = hosts[(round + k) % hosts.length];
    const url = "http://" + host + "/r" + round + "/k" + k;
    if (frontier.add(url, round % 4, host)) added.push(url);
  }
  const host = hosts[round % hosts.length];
  for (let k = 0; k < 2; k++) {
    const entry = await frontier.take(host);
    if (!entry) break;
    // Every third URL stays in flight forever: taken, never completed.
    if ((round + k) % 3 === 0) continue;
    frontier.complete(host, entry, { done: true, counted: true });
    completed.push(entry.url);
  }
  const line = JSON.stringify({ round, added, completed });
  const done = frontier.commit().then(() => process.stdout.write(line + "\\n"));
  if (round % 16 === 15) await done;
}
`;

/** Runs the child until it has reported `rounds` committed rounds, then SIGKILLs it. */
async function runAndKill(
  script: string,
  stateDir: string,
  rounds: number,
  killDelayMs: number,
): Promise<Array<{ round: number; added: string[]; completed: string[] }>> {
  const child: ChildProcess = spawn(process.execPath, [script, stateDir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const reports: Array<{ round: number; added: string[]; completed: string[] }> = [];
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("exit", (_, signal) => resolve(signal)),
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    reports.push(JSON.parse(line) as (typeof reports)[number]);
    if (reports.length === rounds) {
      // Killed a little later, wherever the child then is: between rounds, mid-batch, mid-read.
      setTimeout(() => child.kill("SIGKILL"), killDelayMs);
      break;
    }
  }
  const signal = await exited;
  if (reports.length < rounds) throw new Error(`child exited early: ${stderr}`);
  expect(signal).toBe("SIGKILL");
  return reports;
}

let env: FrontierEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("Frontier after a SIGKILL", () => {
  it("keeps every committed URL either queued or fetched, none lost and none both", async () => {
    expect(existsSync(join(DIST, "frontier/index.js"))).toBe(true);
    // The env's own store is closed before the child opens the folder (LevelDB locks it).
    env = await openFrontierEnv({ queueWindow: 3 });
    await env.store.close();
    const script = join(env.dir, "child.mjs");
    await writeFile(script, CHILD);
    const stateDir = join(env.dir, "state");

    const reports = await runAndKill(script, stateDir, 57, 15);
    await env.reopen({ queueWindow: 3 });
    const { frontier, store } = env;

    // Everything the child may have generated, by fingerprint (it can be a few rounds ahead).
    const fingerprinter = await sharedFingerprinter();
    const lastRound = reports.at(-1)?.round ?? 0;
    const universe = new Map<bigint, string>();
    for (let round = 0; round <= lastRound + 5_000; round++) {
      for (let k = 0; k < 6; k++) {
        const url = `http://${HOSTS[(round + k) % HOSTS.length]}/r${round}/k${k}`;
        universe.set(fingerprinter.fingerprint(url), url);
      }
    }

    // What is on disk now: queued URLs per host, fetched and seen fingerprints.
    const scan = await scanQueues(store);
    const queued = new Map<string, string>();
    for (const [host, { count, headSeq }] of scan) {
      const entries = await readQueue(store, host, 0, count + 1);
      expect(entries).toHaveLength(count);
      expect(entries[0]?.seq).toBe(headSeq);
      expect(frontier.record(host).nextSeq).toBeGreaterThan(entries.at(-1)?.seq ?? -1);
      for (const entry of entries) {
        expect(queued.has(entry.url)).toBe(false); // queued at most once
        expect(entry.url.startsWith(`http://${host}/`)).toBe(true);
        queued.set(entry.url, host);
      }
    }
    const fetched = new Set<bigint>();
    await forEachFetched(store, (fp) => fetched.add(fp));
    const seen = new Set<bigint>();
    await forEachSeen(store, (fp) => seen.add(fp));

    // Seen = queued ∪ fetched, disjoint: the dequeue and the fetch record went in one batch.
    for (const fp of seen) {
      const url = universe.get(fp);
      expect(url, `unknown seen fingerprint ${fp}`).toBeDefined();
      const isQueued = queued.has(url as string);
      expect(isQueued !== fetched.has(fp), `${url}: queued=${isQueued} fetched=${fetched.has(fp)}`).toBe(
        true,
      );
    }
    for (const fp of fetched) expect(seen.has(fp)).toBe(true);
    expect(queued.size + fetched.size).toBe(seen.size);

    // Every URL of a committed round survived; every committed completion is fetched, not queued.
    let completedCount = 0;
    for (const { added, completed } of reports) {
      for (const url of added) {
        expect(seen.has(fingerprinter.fingerprint(url)), url).toBe(true);
      }
      for (const url of completed) {
        completedCount++;
        expect(fetched.has(fingerprinter.fingerprint(url)), url).toBe(true);
        expect(queued.has(url), url).toBe(false);
      }
    }
    expect(completedCount).toBeGreaterThan(20);

    // The reopened frontier agrees with the disk and hands out exactly the queued URLs.
    expect(frontier.waitingUrls).toBe(queued.size);
    expect(frontier.seen.size).toBe(seen.size);
    let fetchedPerRecords = 0;
    for (const host of frontier.knownHosts()) fetchedPerRecords += frontier.record(host).fetched;
    expect(fetchedPerRecords).toBe(fetched.size);
    const handedOut: string[] = [];
    for (const host of HOSTS) {
      let lastSeq = -1;
      for (;;) {
        const entry = await frontier.take(host);
        if (!entry) break;
        expect(entry.seq).toBeGreaterThan(lastSeq);
        lastSeq = entry.seq;
        handedOut.push(entry.url);
      }
    }
    expect(handedOut.sort()).toEqual([...queued.keys()].sort());
  }, 30_000);
});
