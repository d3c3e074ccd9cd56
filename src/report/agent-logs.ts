import { createReadStream } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { recordedWarcDir, WARC_DIR_FILE } from "../storage/data-dir.js";
import type { CrawlLogEntry } from "../storage/index.js";
import { readWarcFile } from "../storage/warc-reader.js";
import { type CrawlReport, CrawlTally } from "./crawl-tally.js";

/**
 * Reading agents' data folders (`--data`): the crawl log of each, and the agent's id where the folder
 * names it. Works on the folder of a running or killed agent too: a last line without its newline is
 * one being written or torn by a kill (the agent cuts it at its next start), and is skipped.
 */

/** The crawl log's file name inside an agent's data folder. */
export const CRAWL_LOG_FILE = "crawl.log";

/** A WARC file name `<prefix>-<yyyyMMddHHmmss>-<serial>-<agent id>.warc.{gz,zst}[.open]` (see storage). */
const WARC_NAME = /^.+?-\d{14}-\d{5,}-([A-Za-z0-9._-]+)\.warc\.(?:gz|zst)(?:\.open)?$/;

/** What {@link measureAgentDirs} reads besides the crawl logs. */
export interface MeasureOptions {
  /**
   * Read the WARC files of each folder too (`DIR/warc`, and the `--warc-dir` the folder records): pages
   * with no record in any of them are reported, and not counted as covered.
   * @default false
   */
  readonly readWarcs?: boolean;
}

/**
 * Reads the crawl logs of `dirs` (agents' data folders) and measures them, against `truth` when given.
 * @throws UbiError InvalidArgument when a folder has no readable crawl log, is given twice, or its log
 *   holds a line that is not JSON.
 */
export async function measureAgentDirs(
  dirs: readonly string[],
  truth?: ReadonlySet<string>,
  options: MeasureOptions = {},
): Promise<CrawlReport> {
  const tally = new CrawlTally();
  const given = new Set<string>();
  for (const dir of dirs) {
    const full = resolve(dir);
    if (given.has(full)) throw new UbiError(ErrorCode.InvalidArgument, `${dir} is given twice`);
    given.add(full);
    await tallyAgentDir(tally, dir, options);
  }
  return tally.report(truth);
}

/**
 * Adds to `tally`, for agent `index`, the URLs of the response and revisit records of every WARC file
 * of data folder `dir` (finished and `.open` files alike): in `dir/warc` and in the `--warc-dir` the
 * folder records. A recorded folder missing on this machine is named, and that agent's pages are not
 * checked (they are not all in `dir/warc`). A file the reader cannot read to its end counts what was
 * read of it, and is named.
 */
async function tallyWarcFiles(tally: CrawlTally, index: number, dir: string): Promise<void> {
  const recorded = await recordedWarcDir(dir);
  const folders = [join(dir, "warc")];
  if (recorded !== undefined && resolve(recorded) !== resolve(folders[0] as string)) {
    if ((await warcNamesIn(recorded)) === undefined) {
      tally.addMissingWarcFolder(`${recorded} (recorded in ${join(dir, WARC_DIR_FILE)})`);
      return;
    }
    folders.push(recorded);
  }
  const urls = new Set<string>();
  const unreadable: string[] = [];
  let files = 0;
  let found = false;
  for (const folder of folders) {
    const names = await warcNamesIn(folder);
    if (names === undefined) continue;
    found = true;
    files += names.length;
    for (const name of names) {
      const path = join(folder, name);
      try {
        for await (const record of readWarcFile(path)) {
          if (record.type !== "response" && record.type !== "revisit") continue;
          const url = record.headers.get("warc-target-uri");
          if (url !== undefined) urls.add(url);
        }
      } catch (error) {
        unreadable.push(`${path} (${errorMessage(error)})`);
      }
    }
  }
  if (found) tally.addArchive(index, urls, files, unreadable);
}

/** The WARC file names of `folder`, sorted; undefined when it does not exist. */
async function warcNamesIn(folder: string): Promise<string[] | undefined> {
  try {
    return (await readdir(folder)).filter((name) => WARC_NAME.test(name)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UbiError(ErrorCode.InvalidArgument, `cannot read the WARC folder ${folder}`, { cause: error });
  }
}

/**
 * Adds the agent of data folder `dir` to `tally` with every line of its crawl log (and, with
 * `readWarcs`, what its WARC files hold). The agent is named by the `agent` field of its log's lines,
 * else by its WARC files' names (which end in its id), else by the folder.
 * @throws UbiError InvalidArgument as {@link measureAgentDirs}.
 */
export async function tallyAgentDir(
  tally: CrawlTally,
  dir: string,
  options: MeasureOptions = {},
): Promise<void> {
  const path = join(dir, CRAWL_LOG_FILE);
  const index = tally.addAgent(dir);
  if (options.readWarcs === true) await tallyWarcFiles(tally, index, dir);
  let named = false;
  const torn = await forEachLine(path, (text, lineNumber) => {
    const entry = parseEntry(path, text, lineNumber);
    if (!named && typeof entry.agent === "string" && entry.agent !== "") {
      tally.nameAgent(index, entry.agent);
      named = true;
    }
    tally.add(index, entry);
  });
  if (torn) tally.markTornLine(index);
  if (!named) {
    const id = await idOfWarcFiles(dir);
    if (id !== undefined) tally.nameAgent(index, id);
  }
}

/** A fetch in a crawl log: its URL, when it began, how long it took and the bytes it moved. */
export interface LoggedFetch {
  readonly url: string;
  readonly atMs: number;
  readonly durationMs: number;
  /** Bytes on the wire. */
  readonly bytes: number;
}

/**
 * The fetches of data folder `dir`'s crawl log, in log order: lines with status > 0 but attempts
 * (`willRetry`), as {@link CrawlTally} counts them.
 * @throws UbiError InvalidArgument as {@link measureAgentDirs}, and for a line without a valid `ts`.
 */
export async function readFetches(dir: string): Promise<LoggedFetch[]> {
  const path = join(dir, CRAWL_LOG_FILE);
  const fetches: LoggedFetch[] = [];
  await forEachLine(path, (text, lineNumber) => {
    const entry = parseEntry(path, text, lineNumber);
    if (!(entry.status > 0) || entry.willRetry) return;
    const atMs = Date.parse(entry.ts);
    if (Number.isNaN(atMs)) {
      throw new UbiError(ErrorCode.InvalidArgument, `${path}:${lineNumber} has no valid time (ts)`);
    }
    fetches.push({ url: entry.url, atMs, durationMs: entry.durationMs ?? 0, bytes: entry.bytes ?? 0 });
  });
  return fetches;
}

/** Line `lineNumber` of crawl log `path`, parsed; throws `InvalidArgument` for one that is not a crawl log line. */
function parseEntry(path: string, text: string, lineNumber: number): CrawlLogEntry {
  let entry: CrawlLogEntry;
  try {
    entry = JSON.parse(text) as CrawlLogEntry;
  } catch (error) {
    throw new UbiError(ErrorCode.InvalidArgument, `${path}:${lineNumber} is not a crawl log line`, {
      cause: error,
    });
  }
  if (typeof entry !== "object" || entry === null || typeof entry.url !== "string") {
    throw new UbiError(ErrorCode.InvalidArgument, `${path}:${lineNumber} is not a crawl log line`);
  }
  return entry;
}

/**
 * Calls `onLine` with each newline-terminated, non-empty line of `path` and its 1-based number;
 * returns true when the file ends in a line without a newline (not passed on).
 */
async function forEachLine(
  path: string,
  onLine: (text: string, lineNumber: number) => void,
): Promise<boolean> {
  const input = createReadStream(path, { encoding: "utf8" });
  let rest = "";
  let lineNumber = 0;
  try {
    for await (const chunk of input as AsyncIterable<string>) {
      const text = rest + chunk;
      let start = 0;
      for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
        lineNumber++;
        const line = text.slice(start, newline).trimEnd();
        if (line !== "") onLine(line, lineNumber);
        start = newline + 1;
      }
      rest = text.slice(start);
    }
  } catch (error) {
    if (error instanceof UbiError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no crawl log" : `cannot read the crawl log (${code ?? String(error)})`;
    throw new UbiError(ErrorCode.InvalidArgument, `${why} at ${path}: not an agent's data folder?`, {
      cause: error,
    });
  } finally {
    input.destroy();
  }
  return rest.trim() !== "";
}

/**
 * The one agent id the WARC files of data folder `dir` (under `dir/warc` and its recorded
 * `--warc-dir`) are named with, or undefined (none, or several).
 */
async function idOfWarcFiles(dir: string): Promise<string | undefined> {
  const recorded = await recordedWarcDir(dir).catch(() => undefined);
  const names: string[] = [];
  for (const folder of [join(dir, "warc"), ...(recorded === undefined ? [] : [recorded])]) {
    names.push(...(await readdir(folder).catch(() => [])));
  }
  const ids = new Set<string>();
  for (const name of names) {
    const id = WARC_NAME.exec(name)?.[1];
    if (id !== undefined) ids.add(id);
  }
  return ids.size === 1 ? [...ids][0] : undefined;
}
