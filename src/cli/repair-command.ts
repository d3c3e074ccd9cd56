import { join } from "node:path";
import { ErrorCode, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import { repairStateStore } from "../storage/state/state-repair.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";

const REPAIR_FLAGS = {
  data: { type: "string", help: "the stopped agent's data folder (its --data)", placeholder: "DIR" },
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl repair --data DIR";
const DESCRIPTION = `Repairs a stopped agent's damaged state store (DIR/state, LevelDB), as an agent that stops with
UBI_ERR_STORAGE_CORRUPT, or warns of storage-damaged at its start, asks: reads every record, lets
LevelDB rebuild the store from every record it can still read (damaged files are moved to
DIR/state/lost), reads it all again, and says what was dropped. What the dropped records said is not
known any more: pages done there may be fetched again and URLs queued there may be missing once the
agent is restarted ('ubicrawl report' shows the coverage). Exits 0 when the store reads whole after the
repair, 1 when it still does not.`;

/**
 * `ubicrawl repair`: repairs a stopped agent's state store and says what it found and lost; `--help`
 * and that on `io.stdout`.
 */
export async function repairCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, REPAIR_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, REPAIR_FLAGS));
    return 0;
  }
  if (flags.data === undefined)
    throw new UbiError(ErrorCode.InvalidArgument, `--data is required (${USAGE})`);
  const stateDir = join(flags.data, "state");
  const { before, dropped, after } = await repairStateStore(stateDir);
  const lines = [
    before.damage === undefined
      ? `${stateDir}: all ${before.records} records read whole before the repair`
      : `${stateDir}: damaged — a full read stopped after ${before.records} records at: ${before.damage}`,
    dropped.length === 0
      ? "LevelDB's repair reported nothing dropped"
      : `LevelDB's repair reported: ${dropped.join("; ")}`,
    after.damage === undefined
      ? `repaired: all ${after.records} records now read whole; restart the agent on ${flags.data}`
      : `still damaged after the repair: a full read stops after ${after.records} records at: ${after.damage}`,
  ];
  if (before.damage !== undefined || dropped.length > 0) {
    lines.push(
      "what the dropped records said is lost: pages done there may be fetched again, URLs queued there may be missing ('ubicrawl report' shows the coverage)",
    );
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return after.damage === undefined ? 0 : 1;
}
