import { ErrorCode, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import { formatReport, measureAgentDirs, readTruthFile } from "../report/index.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";

const REPORT_FLAGS = {
  truth: {
    type: "string",
    help: "ground truth, one URL a line (as 'ubicrawl testweb --truth' writes it): adds coverage",
    placeholder: "FILE",
  },
  json: { type: "boolean", help: "print one JSON document instead of text" },
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl report [--truth FILE] [--json] DIR...";
const DESCRIPTION = `Reports what a crawl did from its agents' data folders (each agent's --data DIR, holding its
crawl.log and warc/, or recording the agent's --warc-dir, whose WARC files are read there), for clusters started by hand as for 'ubicrawl cluster': coverage (truth URLs
fetched and archived / truth size, with --truth), overlap ((fetches - distinct URLs fetched) / distinct
URLs), URLs fetched outside the truth, failures (crawl-log lines with status 0 that were not retried),
retried attempts, pages of the crawl logs with no record in any WARC file (how many, and a few), and
each agent's pages and share. An agent is named by its id where its folder names it (crawl log, WARC
file names), else by its folder. Works on running or killed agents' folders (a torn last line is
skipped; a WARC file torn at its end counts what is whole and is named).`;

/**
 * `ubicrawl report`: coverage, overlap, failures, missing WARC records and shares of a crawl, from its
 * agents' crawl logs and WARC files, printed on `io.stdout`.
 */
export async function reportCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const flags = parseFlags(argv, REPORT_FLAGS);
  if (flags.help) {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, REPORT_FLAGS));
    return 0;
  }
  const dirs = flags.positionals;
  if (dirs.length === 0) {
    throw new UbiError(ErrorCode.InvalidArgument, `name at least one agent's data folder (${USAGE})`);
  }
  const truth = flags.truth === undefined ? undefined : await readTruthFile(flags.truth);
  const report = await measureAgentDirs(dirs, truth, { readWarcs: true });
  if (flags.json) {
    io.stdout.write(`${JSON.stringify({ truthFile: flags.truth ?? null, ...report }, null, 2)}\n`);
    return 0;
  }
  const header =
    `crawl of ${report.agents.length} agent${report.agents.length === 1 ? "" : "s"}: ` +
    `${report.fetches} pages fetched` +
    (flags.truth === undefined ? " (no --truth: no coverage)" : `, against ${flags.truth}`);
  io.stdout.write(`${[header, ...formatReport(report)].join("\n")}\n`);
  return 0;
}
