import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { AGENT_ID_FILE, recordedAgentId, recordedWarcDir, WARC_DIR_FILE } from "../storage/data-dir.js";
import { OPEN_SUFFIX, warcFileCompression } from "../storage/warc-file-name.js";
import { cdxjPathOf } from "../storage/warc-indexer.js";

/**
 * What an export reads from agents' data dirs (copied to one machine): each finished WARC file of
 * `DIR/warc` and of the `--warc-dir` DIR records, whose CDXJ index is beside it — or of DIR itself, a
 * WARC folder (an agent's `--warc-dir`).
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
}

/**
 * Lists the WARC files of the data dirs `dirs`.
 * @throws UbiError InvalidArgument for a dir given twice, missing, not a folder, or neither a data dir
 *   (no `agent-id`, `crawl.log` or `warc/` in it) nor a WARC folder, and for two dirs holding a WARC
 *   file of the same name;
 *   StorageFailed for a folder or file that cannot be read.
 */
export async function findArchiveSources(dirs: readonly string[]): Promise<ArchiveSources> {
  if (dirs.length === 0) throw new UbiError(ErrorCode.InvalidArgument, "name at least one data dir");
  const given = new Set<string>();
  const byName = new Map<string, WarcSource>();
  const skippedOpen: string[] = [];
  const agentIds: string[] = [];
  for (const dir of dirs) {
    const full = resolve(dir);
    if (given.has(full)) throw new UbiError(ErrorCode.InvalidArgument, `${dir} is given twice`);
    given.add(full);
    const folders = await warcFoldersOf(dir);
    const id = await recordedAgentId(dir);
    if (id) agentIds.push(id);
    const entries = [];
    for (const folder of folders) entries.push(...(await warcFilesOf(folder)));
    for (const entry of entries) {
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
  }
  const warcs = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { warcs, skippedOpen, agentIds };
}

/** The index beside a WARC file (which may be missing or stale: the export checks it). */
export function indexBeside(warc: WarcSource): string {
  return cdxjPathOf(warc.path);
}

/**
 * The folders of `dir`'s WARC files: `dir/warc` of a data dir and the `--warc-dir` it records, `dir`
 * itself when it holds WARC files; rejects a path that is neither, saying what it is, and a data dir
 * whose recorded WARC folder is not on this machine.
 */
async function warcFoldersOf(dir: string): Promise<string[]> {
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
  if (names.some((name) => warcFileCompression(name) !== undefined)) return [dir];
  if (![AGENT_ID_FILE, CRAWL_LOG, WARC_FOLDER].some((name) => names.includes(name))) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${dir} is not an agent's data dir (it has no ${AGENT_ID_FILE}, ${CRAWL_LOG} or ${WARC_FOLDER}/) nor a folder of WARC files: name the folders given to the agents' --data (or --warc-dir)`,
    );
  }
  const folders = [join(dir, WARC_FOLDER)];
  const recorded = await recordedWarcDir(dir);
  if (recorded === undefined || resolve(recorded) === resolve(folders[0] as string)) return folders;
  if (
    !(await stat(recorded).then(
      (found) => found.isDirectory(),
      () => false,
    ))
  ) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `${dir} records its WARC files in ${recorded} (${join(dir, WARC_DIR_FILE)}), which is not a folder here: give export a copy of that folder instead of the data dir`,
    );
  }
  return [...folders, recorded];
}

/** The WARC files (finished and `.open`) of a WARC folder; none when it does not exist. */
async function warcFilesOf(folder: string): Promise<{ path: string; name: string }[]> {
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
