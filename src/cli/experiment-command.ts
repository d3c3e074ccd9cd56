import { availableParallelism } from "node:os";
import { ErrorCode, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, formatNameList, parseFlags } from "../flags/index.js";
import {
  balanceExperiment,
  bandwidthExperiment,
  batchingExperiment,
  type Experiment,
  faultsExperiment,
  formatTextTable,
  freshnessExperiment,
  modesExperiment,
  partitioningExperiment,
  politenessExperiment,
  replicationExperiment,
  scalingExperiment,
  writeReport,
} from "../lab/index.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";

/**
 * The experiments. Each is typed by its own flags; here they are run with flags parsed from those very
 * specs, which the common type cannot express (its `run` takes any experiment's flags).
 */
const EXPERIMENTS: readonly Experiment[] = [
  balanceExperiment as unknown as Experiment,
  modesExperiment as unknown as Experiment,
  batchingExperiment as unknown as Experiment,
  replicationExperiment as unknown as Experiment,
  partitioningExperiment as unknown as Experiment,
  politenessExperiment as unknown as Experiment,
  faultsExperiment as unknown as Experiment,
  bandwidthExperiment as unknown as Experiment,
  scalingExperiment as unknown as Experiment,
  freshnessExperiment as unknown as Experiment,
];

const OUT_FLAG = {
  out: {
    type: "string",
    help: "folder of the report (created): report.md, CSV tables, SVG plots",
    placeholder: "DIR",
  },
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl experiment NAME [flags] --out DIR";
const DESCRIPTION = `The crawl laboratory: runs one of the founding papers' measurements and writes its report under
--out — CSV tables (summary.csv first), SVG plots and report.md, which checks the papers' claims against
the figures — then prints the main table. Experiments:
${formatNameList(EXPERIMENTS.map((e) => [e.name, e.summary]))}
'ubicrawl experiment NAME --help' lists an experiment's flags.`;

/**
 * `ubicrawl experiment NAME`: runs an experiment and writes its report; its progress on `io.stderr`,
 * `--help`, the main table and the claims on `io.stdout`.
 */
export async function experimentCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h") {
    io.stdout.write(formatHelp(USAGE, DESCRIPTION, OUT_FLAG));
    return name === undefined ? 2 : 0;
  }
  const experiment = EXPERIMENTS.find((e) => e.name === name);
  if (!experiment) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      `no experiment "${name}": the experiments are ${EXPERIMENTS.map((e) => e.name).join(", ")}`,
    );
  }
  const specs = { ...experiment.flags, ...OUT_FLAG };
  const flags = parseFlags(rest, specs);
  if (flags.help) {
    io.stdout.write(
      formatHelp(`ubicrawl experiment ${experiment.name} [flags] --out DIR`, experiment.description, specs),
    );
    return 0;
  }
  if (flags.positionals.length > 0) {
    throw new UbiError(ErrorCode.InvalidArgument, `unexpected argument "${flags.positionals[0]}" (${USAGE})`);
  }
  const out = flags.out;
  if (out === undefined) throw new UbiError(ErrorCode.InvalidArgument, `--out DIR is required (${USAGE})`);
  const startedAt = new Date();
  const result = await experiment.run(flags, { progress: (line) => io.stderr.write(`${line}\n`) });
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  const files = await writeReport(out, result, {
    command: ["ubicrawl", "experiment", ...argv].join(" "),
    startedAt,
    seconds,
    platform: `Node.js ${process.version}, ${availableParallelism()} CPUs`,
  });
  const main = result.tables[0];
  if (main) io.stdout.write(`${formatTextTable(main)}\n\n`);
  for (const check of result.checks) {
    io.stdout.write(`${check.holds ? "holds" : "FAILS"}: ${check.claim} — ${check.detail}\n`);
  }
  io.stdout.write(`\nreport: ${files[0]} (${files.length} files, ${seconds.toFixed(1)} s)\n`);
  return 0;
}
