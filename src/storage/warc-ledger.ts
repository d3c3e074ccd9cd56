import { rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import type { CrawlLog } from "./crawl-log.js";
import type { GroupCommit } from "./group-commit.js";
import type { StateOp, StateReader } from "./state/key-range.js";
import { metaEntries, metaOp } from "./state/meta-records.js";
import { OPEN_SUFFIX } from "./warc-file-name.js";
import { recoverWarcFile } from "./warc-recovery.js";
import type { WarcWriter } from "./warc-writer.js";

/**
 * What the state knows of each WARC file, so that an agent can tell at open whether the files still
 * hold every page its state calls done. The state records no file or offset per page (that would be
 * one more write per page); instead each group commit that moves a file's length records, in the
 * state's metadata, one record per file changed: the bytes of whole records synced in it (the commit's
 * pages are all there), and the crawl log's length before the file was opened (every page archived in
 * it is logged after that offset). At open, a file shorter than its record, or gone, lost pages the
 * state calls done; the crawl log from that offset on says which pages they may be.
 */

/** Metadata key prefix of the WARC file records (the file's name follows). */
const FILE_KEY_PREFIX = "warc-file:";

/** Metadata key prefix of the WARC files moved off the agent by `--on-warc-closed` (the name follows). */
const OFFLOADED_KEY_PREFIX = "warc-offloaded:";

/** Metadata key prefix of the WARC files the running check found damaged (the name follows). */
const SCRUBBED_KEY_PREFIX = "warc-scrub-damaged:";

/** What the state records of one WARC file. */
export interface RecordedWarcFile {
  /** Its name (finished: without `.open`). */
  readonly name: string;
  /** Bytes of whole records synced in it as of the last commit that made pages archived in it done. */
  readonly bytes: number;
  /** A crawl-log offset (the start of a line) before which no page archived in this file is logged. */
  readonly logFrom: number;
}

/** A WARC file shorter at open than the state records it (see {@link findDamagedWarcFiles}). */
export interface DamagedWarcFile extends RecordedWarcFile {
  /** Its full path. */
  readonly path: string;
  /** Its length at open: 0 when it is gone. */
  readonly foundBytes: number;
}

/** The state op that records `file`. */
export function warcFileRecordOp(file: RecordedWarcFile): StateOp {
  return metaOp(FILE_KEY_PREFIX + file.name, JSON.stringify({ bytes: file.bytes, logFrom: file.logFrom }));
}

/**
 * The state op that records finished file `name` as moved elsewhere (by the operator's hook): its
 * absence is no loss.
 */
export function warcFileOffloadedOp(name: string): StateOp {
  return metaOp(OFFLOADED_KEY_PREFIX + name, "");
}

/**
 * The state op that records finished file `name` as found damaged by the running check, its lost
 * pages queued again: the check does not take it up again.
 */
export function warcFileScrubbedOp(name: string, lostPages: number): StateOp {
  return metaOp(SCRUBBED_KEY_PREFIX + name, JSON.stringify({ lostPages }));
}

/**
 * Records the extent of the writer's files in the state at each group commit of `committer`: each
 * commit that moved a file adds one op for it, nothing per page. A file first seen at a commit was
 * opened after the previous commit's look, so no page archived in it was logged before the crawl log's
 * length then. Looks before each batch, hence before its sync: the lengths seen are synced when the
 * batch is written.
 */
export function recordWarcFileExtents(deps: {
  readonly warc: Pick<WarcWriter, "fileExtents">;
  readonly crawlLog: Pick<CrawlLog, "writtenBytes">;
  readonly committer: GroupCommit;
}): void {
  /** This writer's files as recorded so far. */
  const recorded = new Map<string, { bytes: number; readonly logFrom: number }>();
  /** The crawl log's length at the last look: no page of a file opened since is logged before it. */
  let logBytesSeen = deps.crawlLog.writtenBytes;
  deps.committer.beforeWrite((ops) => {
    for (const { name, bytes } of deps.warc.fileExtents()) {
      let file = recorded.get(name);
      if (file === undefined) {
        file = { bytes: 0, logFrom: logBytesSeen };
        recorded.set(name, file);
      }
      if (bytes <= file.bytes) continue;
      file.bytes = bytes;
      ops.push(warcFileRecordOp({ name, ...file }));
    }
    logBytesSeen = deps.crawlLog.writtenBytes;
  });
}

/**
 * The WARC files under `warcDir` that are shorter than the state records them, or gone (after the
 * writer's own recovery of its `.open` files, which only cuts what no commit vouched for), in the
 * order of their crawl-log offsets; files recorded as moved elsewhere ({@link warcFileOffloadedOp})
 * are not looked for.
 */
export async function findDamagedWarcFiles(store: StateReader, warcDir: string): Promise<DamagedWarcFile[]> {
  const damaged: DamagedWarcFile[] = [];
  for (const file of await recordedWarcFiles(store)) {
    const path = join(warcDir, file.name);
    const foundBytes = await sizeOf(path);
    if (foundBytes < file.bytes) damaged.push({ ...file, path, foundBytes });
  }
  return damaged.sort((a, b) => a.logFrom - b.logFrom);
}

/**
 * The WARC files the state records, but those moved elsewhere ({@link warcFileOffloadedOp}) and,
 * with `skipScrubbed`, those the running check found damaged already ({@link warcFileScrubbedOp}).
 */
export async function recordedWarcFiles(
  store: StateReader,
  skipScrubbed = false,
): Promise<RecordedWarcFile[]> {
  const skipped = new Set<string>();
  for (const prefix of skipScrubbed ? [OFFLOADED_KEY_PREFIX, SCRUBBED_KEY_PREFIX] : [OFFLOADED_KEY_PREFIX]) {
    for await (const [key] of metaEntries(store, prefix)) skipped.add(key.slice(prefix.length));
  }
  const files: RecordedWarcFile[] = [];
  for await (const [key, value] of metaEntries(store, FILE_KEY_PREFIX)) {
    const name = key.slice(FILE_KEY_PREFIX.length);
    if (!skipped.has(name)) files.push({ name, ...parseRecord(key, value) });
  }
  return files;
}

/**
 * Cuts the torn record a truncation left at the end of finished WARC file `path` (the writer's crash
 * recovery, run on it as on an `.open` file), so that readers read it whole again; returns the bytes
 * kept (0: no whole record was left, and the file is removed).
 */
export async function cutTornWarcTail(path: string): Promise<number> {
  const openPath = path + OPEN_SUFFIX;
  await rename(path, openPath);
  return (await recoverWarcFile(openPath)).keptBytes;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw new UbiError(ErrorCode.StorageFailed, `cannot read WARC file ${path}`, { cause: error });
  }
}

function parseRecord(key: string, value: string): { bytes: number; logFrom: number } {
  try {
    const { bytes, logFrom } = JSON.parse(value) as { bytes: unknown; logFrom: unknown };
    if (Number.isSafeInteger(bytes) && Number.isSafeInteger(logFrom)) {
      return { bytes: bytes as number, logFrom: logFrom as number };
    }
  } catch {
    // Reported below.
  }
  throw new UbiError(
    ErrorCode.StorageFailed,
    `the state's ${key} record is not valid (${value}): the state is damaged`,
  );
}
