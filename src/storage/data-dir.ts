/**
 * An agent's data dir (`--data`): checked before anything is opened in it, so a wrong folder fails with
 * a sentence naming the folder and what to do, not with LevelDB's or the file system's own words.
 */

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, link, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { ErrorCode, errorMessage, UbiError } from "../errors.js";

/**
 * The file of a data dir that records the id of the agent it belongs to, written at its first use:
 * its queues, seen set and outbox are that agent's, and another id must not pick them up silently.
 */
export const AGENT_ID_FILE = "agent-id";

/**
 * The file of a data dir that records where its agent writes its WARC files when that is not
 * `DIR/warc` (`--warc-dir`): one absolute path and a newline, so `ubicrawl report` and `ubicrawl export`
 * given the data dir find them. Absent when the agent writes to `DIR/warc`.
 */
export const WARC_DIR_FILE = "warc-dir";

/**
 * Makes `dataDir` ready for agent `agentId`: creates it if missing, checks it is a folder this process
 * may write, and records `agentId` in it on first use ({@link AGENT_ID_FILE}) or checks it against
 * the id recorded there. Rejects with `InvalidArgument` for a path that is not a folder,
 * `StorageFailed` for a folder that cannot be written, and `DataDirOfAnotherAgent` for another id's.
 */
export async function prepareDataDir(dataDir: string, agentId: string): Promise<void> {
  await ensureFolder(dataDir);
  await ensureWritable(dataDir);
  await claimForAgent(dataDir, agentId);
}

/**
 * The id recorded in `dataDir`; undefined when none is (a new folder, or one of an older version), "" when
 * the record was torn (no trailing newline) and records nothing.
 */
export async function recordedAgentId(dataDir: string): Promise<string | undefined> {
  try {
    const text = await readFile(join(dataDir, AGENT_ID_FILE), "utf8");
    // Written whole since records are made durably; one without its newline was torn by a crash of an
    // older version during its first start, and records nothing.
    return text.endsWith("\n") ? text.trim() : "";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UbiError(
      ErrorCode.StorageFailed,
      `cannot read ${join(dataDir, AGENT_ID_FILE)}, the agent id of the data dir: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}

async function ensureFolder(dataDir: string): Promise<void> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(dataDir)).isDirectory();
  } catch {
    // Missing (created below), or not reachable: the writability check says why.
    return;
  }
  if (!isFolder) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `--data ${dataDir} is a file, not a folder: give --data a folder (a new one starts a new crawl)`,
    );
  }
}

/** Creates the data dir if needed; rejects with a clear `StorageFailed` when it cannot be written. */
async function ensureWritable(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true });
    await access(dataDir, constants.W_OK);
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === "ENOTDIR") {
      throw new UbiError(
        ErrorCode.InvalidArgument,
        `--data ${dataDir} is under a file, not a folder: give --data a path of folders`,
        { cause: error },
      );
    }
    // A recursive mkdir on a read-only file system reports ENOENT: ask the closest existing folder.
    const code = (await writeAccessError(dataDir)) ?? errno;
    const why = code === "EROFS" ? "it is on a read-only file system" : (code ?? String(error));
    throw new UbiError(ErrorCode.StorageFailed, `the data dir ${dataDir} is not writable: ${why}`, {
      cause: error,
    });
  }
}

/** The error code of write access to `path`, or to its closest existing ancestor when it is missing. */
async function writeAccessError(path: string): Promise<string | undefined> {
  for (let current = path; ; current = dirname(current)) {
    try {
      await access(current, constants.F_OK);
    } catch {
      if (dirname(current) === current) return undefined;
      continue;
    }
    try {
      await access(current, constants.W_OK);
      return undefined;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code;
    }
  }
}

/**
 * Records in `dataDir` the WARC folder its agent writes to from this start on ({@link WARC_DIR_FILE}):
 * `warcDir` made absolute, or no record when it is undefined (the agent writes to `DIR/warc`).
 * Rejects with `StorageFailed` when the record cannot be written.
 */
export async function recordWarcDir(dataDir: string, warcDir: string | undefined): Promise<void> {
  const path = join(dataDir, WARC_DIR_FILE);
  try {
    if (warcDir === undefined) await unlink(path).catch(ignoreMissing);
    else if ((await recordedWarcDir(dataDir)) !== resolve(warcDir)) {
      await writeDurably(dataDir, path, `${resolve(warcDir)}\n`, false);
    }
  } catch (error) {
    throw new UbiError(ErrorCode.StorageFailed, `cannot write ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

/**
 * The WARC folder recorded in `dataDir` ({@link WARC_DIR_FILE}); undefined when none is (the agent
 * writes to `DIR/warc`, or the folder is of a version that did not record it).
 */
export async function recordedWarcDir(dataDir: string): Promise<string | undefined> {
  try {
    const text = await readFile(join(dataDir, WARC_DIR_FILE), "utf8");
    // Written whole (renamed into place): a record without its newline is not one of ours.
    return text.endsWith("\n") && text.trim() !== "" ? text.trim() : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UbiError(
      ErrorCode.StorageFailed,
      `cannot read ${join(dataDir, WARC_DIR_FILE)}, the WARC folder of the data dir: ${errorMessage(error)}`,
      { cause: error },
    );
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}

/** Records `agentId` in a data dir that has no id yet, or checks the one recorded there. */
async function claimForAgent(dataDir: string, agentId: string): Promise<void> {
  const path = join(dataDir, AGENT_ID_FILE);
  try {
    // Exclusive: of two agents starting on a new folder at once, one records its id, the other is refused.
    await writeDurably(dataDir, path, `${agentId}\n`, true);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new UbiError(ErrorCode.StorageFailed, `cannot write ${path}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }
  const recorded = await recordedAgentId(dataDir);
  if (recorded === undefined || recorded === agentId) return;
  if (recorded === "") {
    // Torn by a crash during the first start: this agent is the first to complete it.
    await writeDurably(dataDir, path, `${agentId}\n`, false);
    return;
  }
  throw new UbiError(
    ErrorCode.DataDirOfAnotherAgent,
    `the data dir ${dataDir} belongs to agent "${recorded}", not "${agentId}" (its crawl state is ` +
      `${recorded}'s, recorded in ${path}): start agent ${recorded} on it (--id ${recorded}), or give ` +
      `${agentId} a new --data folder`,
  );
}

/** Replaces the file `path` with `text`, whole or not at all, even across a power cut. */
export function writeFileDurably(path: string, text: string): Promise<void> {
  return writeDurably(dirname(path), path, text, false);
}

/**
 * Records `text` as `path` in `dir` whole or not at all, even across a power cut: written and synced
 * under a temporary name, then linked (`exclusive`: failing with EEXIST when `path` exists) or renamed
 * into place, and the folder synced.
 */
async function writeDurably(dir: string, path: string, text: string, exclusive: boolean): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const file = await open(temporary, "w");
  try {
    await file.writeFile(text);
    await file.datasync();
  } finally {
    await file.close();
  }
  if (exclusive) {
    try {
      await link(temporary, path);
    } finally {
      await unlink(temporary);
    }
  } else {
    await rename(temporary, path);
  }
  const folder = await open(dir, "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
