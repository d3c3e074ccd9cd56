import { stat } from "node:fs/promises";
import { Level } from "level";
import { ErrorCode, errorMessage, UbiError } from "../../errors.js";
import { damageReported, isCorruption } from "./state-damage.js";

/**
 * `ubicrawl repair`'s work on one state store: read it all, let LevelDB's repair rebuild it from every
 * record still readable, and read it all again, saying what was found, what LevelDB dropped, and
 * whether the store now reads whole.
 */

/** In Node, `level` is classic-level's ClassicLevel, whose static `repair` its types do not declare. */
const repairable = Level as unknown as { repair(location: string): Promise<void> };

/** What {@link repairStateStore} found and did. */
export interface StateRepair {
  /** Records a full read found before the repair, and the damage it met (undefined: none). */
  readonly before: { readonly records: number; readonly damage: string | undefined };
  /** What LevelDB's repair wrote of dropped or damaged data, in its words. */
  readonly dropped: readonly string[];
  /** Records a full read finds after the repair, and the damage it still meets (undefined: none). */
  readonly after: { readonly records: number; readonly damage: string | undefined };
}

/**
 * Repairs the LevelDB state store in `stateDir` (the agent must be stopped). Rejects with
 * `InvalidArgument` when there is no store there, `DataDirInUse` while an agent has it open.
 */
export async function repairStateStore(stateDir: string): Promise<StateRepair> {
  try {
    await stat(stateDir);
  } catch {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `there is no state store in ${stateDir}: give the agent's --data folder`,
    );
  }
  const before = await readAll(stateDir);
  await repairable.repair(stateDir);
  const dropped = await damageReported(stateDir);
  const after = await readAll(stateDir);
  return { before, dropped, after };
}

/** Reads every record of the store: how many it read, and the damage that stopped it, if any. */
async function readAll(stateDir: string): Promise<{ records: number; damage: string | undefined }> {
  const db = new Level<string, string>(stateDir, { createIfMissing: false });
  let records = 0;
  try {
    await db.open();
    for await (const _ of db.iterator({ fillCache: false })) records++;
    return { records, damage: undefined };
  } catch (error) {
    if ((error as { cause?: { code?: unknown } }).cause?.code === "LEVEL_LOCKED") {
      throw new UbiError(
        ErrorCode.DataDirInUse,
        `${stateDir} is open in a running agent: stop it before repairing its state store`,
        { cause: error },
      );
    }
    if (!isCorruption(error)) {
      throw new UbiError(
        ErrorCode.StorageFailed,
        `cannot read the state store in ${stateDir}: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
    return { records, damage: corruptionText(error) };
  } finally {
    await db.close().catch(() => {});
  }
}

/** LevelDB's own `Corruption: …` sentence in `error`'s chain, else the error's message. */
function corruptionText(error: unknown): string {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (/Corruption: /.test(current.message)) return current.message;
  }
  return errorMessage(error);
}
