import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { AGENT_ID_FILE, recordedAgentId } from "../storage/data-dir.js";
import { OPEN_SUFFIX, warcFileCompression } from "../storage/warc-file-name.js";
import { cdxjPathOf } from "../storage/warc-indexer.js";

/**
 * What an export reads from agents' data dirs (copied to one machine): each finished WARC file of
 * `DIR/warc` with its CDXJ index, and the crawl's seeds (the depth-0 lines of `DIR/crawl.log`).
 */

/** The WARC folder and crawl log inside a data dir. */
const WARC_FOLDER = "warc";
const CRAWL_LOG = "crawl.log";

/** One finished WARC file to export. */
export interface WarcSource {
  /** Its path on this machine. */
  readonly path: string;
  /** Its file name: its name in the package (`archive/<name>`) and in the merged index. */
  readonly name: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** What the data dirs hold for an export. */
export interface ArchiveSources {
  /** Every finished WARC file, ordered by name. */
  readonly warcs: readonly WarcSource[];
  /** Live or unrecovered WARC files (`.open`), left out: an agent finishes them at its next start. */
  readonly skippedOpen: readonly string[];
  /** The agent ids the dirs record (a dir of an older version, recording none, adds none). */
  readonly agentIds: readonly string[];
  /** URLs crawled at depth 0: the seeds. */
  readonly seeds: ReadonlySet<string>;
}

/**
 * Lists the WARC files and seeds of the data dirs `dirs`.
 * @throws UbiError InvalidArgument for a dir given twice, missing, not a folder, or not a data dir (no
 *   `agent-id`, `crawl.log` or `warc/` in it), and for two dirs holding a WARC file of the same name;
 *   StorageFailed for a folder or file that cannot be read.
 */
export async function findArchiveSources(dirs: readonly string[]): Promise<ArchiveSources> {
  if (dirs.length === 0) throw new UbiError(ErrorCode.InvalidArgument, "name at least one data dir");
  const given = new Set<string>();
  const byName = new Map<string, WarcSource>();
  const skippedOpen: string[] = [];
  const agentIds: string[] = [];
  const seeds = new Set<string>();
  for (const dir of dirs) {
    const full = resolve(dir);
    if (given.has(full)) throw new UbiError(ErrorCode.InvalidArgument, `${dir} is given twice`);
    given.add(full);
    await checkDataDir(dir);
    const id = await recordedAgentId(dir);
    if (id) agentIds.push(id);
    for (const entry of await warcFilesOf(dir)) {
      if (entry.name.endsWith(OPEN_SUFFIX)) {
        skippedOpen.push(entry.path);
        continue;
      }
      const earlier = byName.get(entry.name);
      if (earlier !== undefined) {
        throw new UbiError(
          ErrorCode.InvalidArgument,
          `${entry.path} and ${earlier.path} have the same name: is one data dir copied twice?`,
        );
      }
      byName.set(entry.name, { ...entry, bytes: await sizeOf(entry.path) });
    }
    await addSeeds(join(dir, CRAWL_LOG), seeds);
  }
  const warcs = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { warcs, skippedOpen, agentIds, seeds };
}

/** The index beside a WARC file (which may be missing or stale: the export checks it). */
export function indexBeside(warc: WarcSource): string {
  return cdxjPathOf(warc.path);
}

/** Rejects a path that is not an agent's data dir, saying what it is. */
async function checkDataDir(dir: string): Promise<void> {
  let names: string[];
  try {
    if (!(await stat(dir)).isDirectory()) {
      throw new UbiError(ErrorCode.InvalidArgument, `${dir} is a file, not an agent's data dir`);
    }
    names = await readdir(dir);
  } catch (error) {
    if (error instanceof UbiError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new UbiError(ErrorCode.InvalidArgument, `${dir} does not exist`);
    throw new UbiError(ErrorCode.StorageFailed, `cannot read ${dir}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  if (![AGENT_ID_FILE, CRAWL_LOG, WARC_FOLDER].some((name) => names.includes(name))) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${dir} is not an agent's data dir (it has no ${AGENT_ID_FILE}, ${CRAWL_LOG} or ${WARC_FOLDER}/): name the folders given to the agents' --data`,
    );
  }
}

/** The WARC files (finished and `.open`) of a data dir's `warc/` folder; none when it has none. */
async function warcFilesOf(dir: string): Promise<{ path: string; name: string }[]> {
  const folder = join(dir, WARC_FOLDER);
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new UbiError(ErrorCode.StorageFailed, `cannot read ${folder}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  return names
    .filter((name) => warcFileCompression(name) !== undefined)
    .map((name) => ({ path: join(folder, name), name }));
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot read ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

/**
 * Adds the URLs of the depth-0 lines of the crawl log at `path` to `seeds`; a missing log adds none,
 * and a line that is not JSON (torn by a kill) is skipped.
 */
async function addSeeds(path: string, seeds: Set<string>): Promise<void> {
  const stream = createReadStream(path, { encoding: "utf8" });
  try {
    for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
      if (!line.includes('"depth":0')) continue;
      try {
        const entry = JSON.parse(line) as { url?: unknown; depth?: unknown };
        if (entry.depth === 0 && typeof entry.url === "string") seeds.add(entry.url);
      } catch {
        // A torn last line.
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new UbiError(ErrorCode.StorageFailed, `cannot read ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    stream.destroy();
  }
}
