import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { readChangeFrequency } from "../change-frequency.js";
import { ErrorCode, errorMessage } from "../errors.js";
import type { Frontier } from "../frontier/index.js";
import type { Logger } from "../logging/index.js";
import {
  type CrawlLogEntry,
  cutTornWarcTail,
  type DamagedWarcFile,
  digestForgetOp,
  findDamagedWarcFiles,
  forEachPayloadDigest,
  type GroupCommit,
  payloadOriginals,
  readCrawlLog,
  type StateStore,
  type UrlTraits,
  warcFileRecordOp,
} from "../storage/index.js";
import { hostKey } from "../url/index.js";

/**
 * The check at open of the WARC files against the state (see `src/storage/warc-ledger.ts`): pages the
 * state calls done whose records a damaged WARC file lost (cut short, or deleted) are fetched again.
 */

/** Lost pages named in the warning, at most. */
const EXAMPLES = 5;
/** Payload digests asked for their originals at once. */
const DIGEST_CHUNK = 1000;

/** A file name's serial (`<prefix>-<yyyyMMddHHmmss>-<serial>-<agent id>.warc.…`), or undefined. */
const SERIAL = /-\d{14}-(\d{5,})-[^/]*\.warc\.(?:gz|zst)$/;

/** What {@link refetchLostPages} needs: the opened state, crawl log and frontier, and where the files are. */
export interface LostPagesDeps {
  readonly store: StateStore;
  readonly committer: GroupCommit;
  readonly frontier: Frontier;
  readonly warcDir: string;
  readonly crawlLogPath: string;
  readonly logger: Logger;
}

/**
 * Finds the WARC files the state says hold more than they do; when there are any, cuts the torn record
 * a truncation left, queues again every page the state calls done and no WARC file holds (the crawl
 * log names them), forgets the payload digests whose first copy was one of them (so that the next copy
 * is stored whole), records the files as they are now, durably in one batch, and warns, naming the
 * files. Returns how many pages are fetched again.
 *
 * The candidates are the crawl log's fetches from the first damaged file's offset on; each is looked
 * for in the files from the one before the first damaged file on (a page is logged right after its
 * record is appended, so its record is in a file opened before its log line only when a rotation came
 * in between). A candidate whose record is in an older file still (two rotations between its record
 * and its line) is fetched again needlessly: a second copy, never a loss.
 */
export async function refetchLostPages(deps: LostPagesDeps): Promise<number> {
  const damaged = await findDamagedWarcFiles(deps.store, deps.warcDir);
  const first = damaged[0];
  if (first === undefined) return 0;
  const now: DamagedWarcFile[] = [];
  for (const file of damaged) now.push({ ...file, foundBytes: await cutTail(file, deps.logger) });
  const candidates = await fetchesLoggedFrom(deps.crawlLogPath, first.logFrom);
  const oldestRead = Math.min(...damaged.map((file) => serialOf(file.name) ?? 0)) - 1;
  for (const name of await readdir(deps.warcDir)) {
    const serial = serialOf(name);
    if (serial !== undefined && serial >= oldestRead && candidates.size > 0) {
      await dropArchived(join(deps.warcDir, name), candidates);
    }
  }
  const urls = [...candidates.keys()];
  const done = await deps.frontier.wasFetched(urls);
  const lost = urls.filter((_, i) => done[i]);
  for (const url of lost) {
    const { depth, traits } = candidates.get(url) as { depth: number; traits: UrlTraits };
    deps.frontier.fetchAgain(url, depth, hostKey(url), traits);
  }
  await forgetLostOriginals(deps, new Set(lost));
  for (const file of now) deps.committer.add(warcFileRecordOp({ ...file, bytes: file.foundBytes }));
  await deps.committer.commit();
  const files = now.map((file) =>
    file.foundBytes === 0
      ? `${file.path} is gone (${file.bytes} bytes synced)`
      : `${file.path} is ${file.bytes - file.foundBytes} bytes shorter than the ${file.bytes} bytes synced`,
  );
  deps.logger.warn(
    {
      event: "warc-damaged",
      code: ErrorCode.StorageCorrupt,
      files: now.map((file) => ({ path: file.path, syncedBytes: file.bytes, foundBytes: file.foundBytes })),
      pagesLost: lost.length,
      examples: lost.slice(0, EXAMPLES),
    },
    `WARC records are missing: ${files.join("; ")}. ${lost.length} page${lost.length === 1 ? "" : "s"} ` +
      `the state had as done ${lost.length === 1 ? "has" : "have"} no WARC record any more` +
      `${lost.length === 0 ? "" : ` (${lost.slice(0, EXAMPLES).join(", ")}${lost.length > EXAMPLES ? ", …" : ""})`}: ` +
      "queued to be fetched again",
  );
  return lost.length;
}

/** Cuts the torn tail of `file` if it is still there; returns its length now (0: gone, or unreadable). */
async function cutTail(file: DamagedWarcFile, logger: Logger): Promise<number> {
  if (file.foundBytes === 0) return 0;
  try {
    return await cutTornWarcTail(file.path);
  } catch (error) {
    // Its records are then not read either: every candidate is taken for lost, none is missed.
    logger.error(
      { event: "warc-unreadable", path: file.path, err: error },
      `cannot cut the torn end of WARC file ${file.path} (${errorMessage(error)}); its pages are fetched again`,
    );
    return 0;
  }
}

/** The pages (fetches, not attempts or failures) logged in `path` from byte `fromByte` on, by URL. */
export async function fetchesLoggedFrom(
  path: string,
  fromByte: number,
): Promise<Map<string, { depth: number; traits: UrlTraits }>> {
  const fetches = new Map<string, { depth: number; traits: UrlTraits }>();
  for await (const entry of readCrawlLog(path, fromByte)) {
    if (entry.status > 0 && entry.willRetry !== true) fetches.set(entry.url, queuedAs(entry));
  }
  return fetches;
}

/**
 * How the page of `entry` was queued, as far as its line says: its depth, a sitemap mark, its
 * lastmod and its changefreq (a sitemap found under another host's robots.txt is queued for its own
 * host only; a changefreq of no known value is left out).
 */
function queuedAs(entry: CrawlLogEntry): { depth: number; traits: UrlTraits } {
  const changefreq = typeof entry.changefreq === "string" ? readChangeFrequency(entry.changefreq) : undefined;
  return {
    depth: entry.depth,
    traits: {
      ...(entry.sitemap === true ? { sitemap: true } : {}),
      ...(typeof entry.lastmod === "string" ? { lastmod: entry.lastmod } : {}),
      ...(changefreq === undefined ? {} : { changefreq }),
    },
  };
}

/** Removes from `candidates` every URL with a response or revisit record in WARC file `path`. */
async function dropArchived(path: string, candidates: Map<string, unknown>): Promise<void> {
  // Loaded only here: an agent whose files are whole never pays for warcio.
  const { readWarcFile } = await import("../storage/warc-reader.js");
  try {
    for await (const record of readWarcFile(path)) {
      if (record.type !== "response" && record.type !== "revisit") continue;
      const url = record.headers.get("warc-target-uri");
      if (url !== undefined) candidates.delete(url);
    }
  } catch {
    // A file unreadable past some record: what it holds beyond is taken for lost.
  }
}

/** Forgets the payload digests whose first stored copy is one of the `lost` pages (at the next commit). */
export async function forgetLostOriginals(
  deps: Pick<LostPagesDeps, "store" | "committer">,
  lost: ReadonlySet<string>,
): Promise<void> {
  if (lost.size === 0) return;
  const digests: string[] = [];
  await forEachPayloadDigest(deps.store, (digest) => digests.push(digest));
  for (let start = 0; start < digests.length; start += DIGEST_CHUNK) {
    const chunk = digests.slice(start, start + DIGEST_CHUNK);
    const originals = await payloadOriginals(deps.store, chunk);
    originals.forEach((original, i) => {
      const digest = chunk[i];
      if (original !== undefined && digest !== undefined && lost.has(original.url)) {
        deps.committer.add(digestForgetOp(digest));
      }
    });
  }
}

function serialOf(name: string): number | undefined {
  const match = SERIAL.exec(name);
  return match ? Number(match[1]) : undefined;
}
