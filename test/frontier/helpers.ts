import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Frontier, type FrontierOptions } from "../../src/frontier/frontier.js";
import { GroupCommit } from "../../src/storage/group-commit.js";
import { StateStore, type StoredQueueEntry } from "../../src/storage/index.js";
import { UrlFingerprinter } from "../../src/url/fingerprint.js";

/** A frontier on a real store in a temp dir, with the hosts reported ready recorded in order. */
export interface FrontierEnv {
  readonly dir: string;
  store: StateStore;
  committer: GroupCommit;
  frontier: Frontier;
  /** Every onHostReady call, in order (reset by the test when it wants). */
  readonly ready: string[];
  /** Counts of store writes by the current committer. */
  writes: number;
  /** Closes the store and opens the same folder again with a fresh committer and frontier. */
  reopen(options?: FrontierOptions): Promise<void>;
  /** Closes the store and removes the folder. */
  dispose(): Promise<void>;
}

let fingerprinter: UrlFingerprinter | undefined;

/** The shared fingerprinter (the WebAssembly module loads once). */
export async function sharedFingerprinter(): Promise<UrlFingerprinter> {
  fingerprinter ??= await UrlFingerprinter.create();
  return fingerprinter;
}

/** Opens a frontier on a new LevelDB folder under the OS temp dir. */
export async function openFrontierEnv(options: FrontierOptions = {}): Promise<FrontierEnv> {
  const dir = await mkdtemp(join(tmpdir(), "ubicrawl-frontier-"));
  const fp = await sharedFingerprinter();
  const env = {
    dir,
    ready: [] as string[],
    writes: 0,
  } as FrontierEnv;
  const open = async (frontierOptions: FrontierOptions): Promise<void> => {
    env.store = await StateStore.open(join(dir, "state"));
    const store = env.store;
    // A fresh committer per frontier: the frontier registers its beforeWrite hook on it.
    env.committer = new GroupCommit((ops) => {
      env.writes++;
      return store.write(ops);
    });
    env.frontier = await Frontier.open(frontierOptions, {
      store,
      committer: env.committer,
      fingerprinter: fp,
      onHostReady: (host) => env.ready.push(host),
    });
  };
  env.reopen = async (frontierOptions = options) => {
    await env.store.close();
    await open(frontierOptions);
  };
  env.dispose = async () => {
    await env.store.close();
    await rm(dir, { recursive: true, force: true });
  };
  await open(options);
  return env;
}

/** URLs `http://host/p<from>` … `http://host/p<to - 1>`. */
export function urlsOf(host: string, from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from; i < to; i++) out.push(`http://${host}/p${i}`);
  return out;
}

/** Takes the next URL of `host`, failing the test when none is waiting. */
export async function mustTake(frontier: Frontier, host: string): Promise<StoredQueueEntry> {
  const entry = await frontier.take(host);
  if (!entry) throw new Error(`expected a URL of ${host} to take`);
  return entry;
}

/** Takes every waiting URL of `host`, in order, returning the URLs (entries stay in flight). */
export async function takeAll(frontier: Frontier, host: string): Promise<string[]> {
  const urls: string[] = [];
  for (;;) {
    const entry = await frontier.take(host);
    if (!entry) return urls;
    urls.push(entry.url);
  }
}

export { ManualClock } from "../support/manual-clock.js";

/** A promise with its resolve and reject exposed. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** Creates a {@link Deferred}. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending promise callbacks (and the microtasks they queue) run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
