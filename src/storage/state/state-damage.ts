import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ErrorCode, UbiError } from "../../errors.js";

/**
 * Damage to an agent's state store (its LevelDB folder), told in ubicrawl's words: LevelDB says
 * `Corruption: …` when a read meets a bad block or checksum, and writes to its own `LOG` file what it
 * dropped while recovering its write-ahead log at open — which it otherwise does without a word.
 */

/** LevelDB's `LOG` lines that report data dropped or damaged. */
const DAMAGE_LINE = /corruption|dropping|lost|missing/i;

/** True when `error`, or an error in its `cause` chain, is LevelDB reporting damaged data. */
export function isCorruption(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if ((current as { code?: unknown }).code === "LEVEL_CORRUPTION") return true;
    if (/^Corruption: /.test(current.message)) return true;
  }
  return false;
}

/** The advice for a damaged state store of the agent whose data dir is `dataDir`. */
export function repairAdvice(dataDir: string): string {
  return (
    `stop the agent and run 'ubicrawl repair --data ${dataDir}': it keeps every record LevelDB can ` +
    "still read and says what it dropped; what the lost records said is not known any more (pages done " +
    "there may be fetched again, URLs queued there may be missing: 'ubicrawl report' shows the coverage)"
  );
}

/** `error` (LevelDB's corruption) as a {@link ErrorCode.StorageCorrupt} naming the folder and what to do. */
export function corruptStateError(error: unknown, stateDir: string, dataDir: string): UbiError {
  const said = error instanceof Error ? error.message : String(error);
  return new UbiError(
    ErrorCode.StorageCorrupt,
    `the state store in ${stateDir} is damaged (LevelDB: ${said}): ${repairAdvice(dataDir)}`,
    { cause: error },
  );
}

/**
 * What LevelDB's `LOG` in `stateDir` reports dropped or damaged since the store was last opened (its
 * `LOG` is started anew at each open); none when it reports nothing, or has no `LOG`.
 */
export async function damageReported(stateDir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(join(stateDir, "LOG"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => DAMAGE_LINE.test(line))
    .map((line) => line.replace(/^\S+ \S+ /, "").trim());
}
