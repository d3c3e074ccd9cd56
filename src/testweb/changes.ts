import { createHash } from "node:crypto";
import { createRandom } from "./prng.js";

/** How the changing pages change: see {@link PageChanges.process}. */
export const CHANGE_PROCESSES = ["periodic", "poisson"] as const;

/** Pages of the test web that change over time (see {@link TestWebOptions.changes}). */
export interface PageChanges {
  /** A changing page gets a new version this often, ms (`poisson`: the median page's mean interval). */
  readonly everyMs: number;
  /** About this percentage of the HTML pages change (chosen by their path); the others never do. */
  readonly percent: number;
  /**
   * `periodic` (the default): every changing page gets a new version every `everyMs`, all at once.
   * `poisson`: each changing page changes as a Poisson process of its own rate, its mean interval drawn
   * (by its path) log-uniformly between `everyMs / spread` and `everyMs × spread` — the model of Cho and
   * Garcia-Molina's freshness studies, rates spanning `spread²`.
   */
  readonly process?: (typeof CHANGE_PROCESSES)[number];
  /** `poisson`: how far pages' mean intervals spread from `everyMs`, either way. @default 10 */
  readonly spread?: number;
}

/** {@link PageChanges.spread}'s default. */
export const DEFAULT_CHANGE_SPREAD = 10;

/** One page as served at a given time: its body, and the validators a conditional GET is checked against. */
export interface PageVersion {
  readonly body: Uint8Array;
  /** Versions since the web started: 0 for a page that never changes. */
  readonly version: number;
  /** A strong ETag of the body. */
  readonly etag: string;
  /** When this version appeared (the web's start for a page that never changes), as an HTTP date. */
  readonly lastModified: string;
}

/** True when the page at `target` (path and query) is one of the changing ones. */
export function isChanging(changes: PageChanges, target: string): boolean {
  return createHash("sha1").update(target).digest().readUInt32BE(0) % 100 < changes.percent;
}

/**
 * The mean time between two versions of the page at `target`, ms: its true change rate's inverse (the
 * ground truth a change-rate estimator is checked against); undefined for a page that never changes.
 */
export function meanChangeIntervalMs(changes: PageChanges, target: string): number | undefined {
  if (!isChanging(changes, target)) return undefined;
  if (changes.process !== "poisson") return changes.everyMs;
  const spread = changes.spread ?? DEFAULT_CHANGE_SPREAD;
  // A second hash of the path (the first picked the changing pages): uniform in [0, 1).
  const draw = createHash("sha1").update(`rate ${target}`).digest().readUInt32BE(0) / 2 ** 32;
  return changes.everyMs * spread ** (2 * draw - 1);
}

/** Change times drawn so far per Poisson page (offsets from the web's start): the process is the same every time. */
const drawn = new Map<string, { offsets: number[]; next: () => number }>();

/**
 * When the page at `target` changed after the web started at `startedAtMs`, up to `untilMs` included,
 * oldest first (ms since the epoch): the ground truth of freshness and age. Empty for a page that never
 * changes. The same arguments give the same times in every process.
 */
export function changeTimes(
  changes: PageChanges,
  startedAtMs: number,
  target: string,
  untilMs: number,
): number[] {
  const meanMs = meanChangeIntervalMs(changes, target);
  if (meanMs === undefined || untilMs < startedAtMs) return [];
  const until = untilMs - startedAtMs;
  if (changes.process !== "poisson") {
    return Array.from({ length: Math.floor(until / meanMs) }, (_, i) => startedAtMs + (i + 1) * meanMs);
  }
  const key = `${changes.everyMs} ${changes.spread ?? DEFAULT_CHANGE_SPREAD} ${target}`;
  let process = drawn.get(key);
  if (process === undefined) {
    const random = createRandom(createHash("sha1").update(`times ${target}`).digest().readUInt32BE(0));
    process = { offsets: [], next: () => -Math.log(1 - random()) * meanMs };
    drawn.set(key, process);
  }
  const { offsets, next } = process;
  while ((offsets.at(-1) ?? 0) <= until) offsets.push((offsets.at(-1) ?? 0) + next());
  const result: number[] = [];
  for (const offset of offsets) {
    if (offset > until) break;
    result.push(startedAtMs + offset);
  }
  return result;
}

/**
 * The page at `target` as served at `nowMs`, the web having started at `startedAtMs`: a changing HTML
 * page's body ends with a comment naming its version (so its payload digest changes), any other body
 * is as given.
 */
export function pageVersion(
  changes: PageChanges,
  startedAtMs: number,
  target: string,
  response: { readonly body: Uint8Array; readonly contentType: string },
  nowMs: number,
): PageVersion {
  const html = response.contentType.startsWith("text/html");
  const { version, lastChangeMs } = html
    ? latestChange(changes, startedAtMs, target, nowMs)
    : { version: 0, lastChangeMs: startedAtMs };
  const body =
    version === 0
      ? response.body
      : Buffer.concat([response.body, Buffer.from(`\n<!-- version ${version} -->\n`)]);
  const etag = `"${createHash("sha1").update(body).digest("hex").slice(0, 20)}"`;
  // HTTP dates have whole seconds: a version's date is the second it appeared in.
  const lastModified = new Date(lastChangeMs).toUTCString();
  return { body, version, etag, lastModified };
}

/** How many times the page at `target` changed by `nowMs`, and when it last did (the web's start if never). */
function latestChange(
  changes: PageChanges,
  startedAtMs: number,
  target: string,
  nowMs: number,
): { version: number; lastChangeMs: number } {
  if (changes.process === "poisson") {
    const times = changeTimes(changes, startedAtMs, target, nowMs);
    return { version: times.length, lastChangeMs: times.at(-1) ?? startedAtMs };
  }
  const everyMs = meanChangeIntervalMs(changes, target);
  const version = everyMs === undefined ? 0 : Math.max(0, Math.floor((nowMs - startedAtMs) / everyMs));
  return { version, lastChangeMs: startedAtMs + version * (everyMs ?? 0) };
}

/**
 * Whether a GET with these conditional headers is answered `304 Not Modified` for `page` (RFC 9110
 * §13.2.2): `If-None-Match` when given (a weak comparison, `*` matching any), else `If-Modified-Since`
 * no earlier than the page's `Last-Modified`.
 */
export function notModified(
  page: Pick<PageVersion, "etag" | "lastModified">,
  ifNoneMatch: string | undefined,
  ifModifiedSince: string | undefined,
): boolean {
  if (ifNoneMatch !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
    return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(page.etag));
  }
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return !Number.isNaN(since) && since >= Date.parse(page.lastModified);
}
