import { isUbiError } from "../errors.js";
import { formatNameList } from "../flags/flag-parser.js";
import { type CommandIo, PROCESS_IO, type TextOutput } from "./command-io.js";
import { packageVersion } from "./package-version.js";

/** A subcommand: gets its arguments and where to print, returns the process exit code. */
type Command = (argv: string[], io: CommandIo) => Promise<number>;

/**
 * The subcommands. Each is loaded only when run: an agent does not load the test web or the CA
 * tooling, and `ubicrawl stats` does not load the crawler (half the start-up CPU of `stats`).
 */
const COMMANDS: Record<string, { load: () => Promise<Command>; summary: string }> = {
  agent: {
    load: async () => (await import("./agent-command.js")).agentCommand,
    summary: "run one crawler agent (alone, or joining a cluster)",
  },
  certs: {
    load: async () => (await import("./certs-command.js")).certsCommand,
    summary: "make the CA and certificates for mutual TLS between agents",
  },
  cluster: {
    load: async () => (await import("./cluster-command.js")).clusterCommand,
    summary: "start the test web and N agents on this machine, watch and steer them",
  },
  ctl: {
    load: async () => (await import("./ctl-command.js")).ctlCommand,
    summary: "steer a running crawl: pause, resume, leave, blacklist, add seeds",
  },
  experiment: {
    load: async () => (await import("./experiment-command.js")).experimentCommand,
    summary: "run one of the papers' measurements (the crawl laboratory): CSV, plots, report",
  },
  export: {
    // In a worker whose young generation is capped: the export's memory stays its own (command-worker.ts).
    // What it prints there comes back to this thread, on `io`.
    load: async () => {
      const { runCommandInWorker } = await import("./command-worker.js");
      return (argv, io) =>
        runCommandInWorker(new URL("./export-command.js", import.meta.url), "exportCommand", argv, io);
    },
    summary: "package agents' data dirs as one WACZ file, for ReplayWeb.page and pywb",
  },
  repair: {
    load: async () => (await import("./repair-command.js")).repairCommand,
    summary: "repair a stopped agent's damaged state store, saying what was lost",
  },
  report: {
    load: async () => (await import("./report-command.js")).reportCommand,
    summary: "coverage, overlap and each agent's share of a crawl, from its agents' crawl logs",
  },
  stats: {
    load: async () => (await import("./stats-command.js")).statsCommand,
    summary: "show an agent's partition stats, or the whole cluster's",
  },
  testweb: {
    load: async () => (await import("./testweb-command.js")).testwebCommand,
    summary: "serve the built-in synthetic test web on loopback",
  },
};

const USAGE = `Usage: ubicrawl <command> [flags]

A fully decentralized, peer-to-peer web crawler.

Commands:
${formatNameList(Object.entries(COMMANDS).map(([name, { summary }]) => [name, summary]))}

Run 'ubicrawl <command> --help' for a command's flags, 'ubicrawl --version' for the version.
`;

/**
 * The CLI entry: dispatches to a subcommand; bad usage exits 2 with a one-line error. It and every
 * command print on `io` only (a test runs them in its own process with its own: test/commands).
 */
export async function main(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    io.stdout.write(`ubicrawl ${await packageVersion()} (Node.js ${process.version})\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`ubicrawl: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    const run = await command.load();
    return await run(rest, io);
  } catch (error) {
    return commandFailed(name, error, io.stderr);
  }
}

/**
 * The exit code of subcommand `name` that threw `error`, said in one line on `stderr`: 2 for bad usage,
 * 1 for any other `UbiError`; anything else (a bug) is thrown again.
 */
export function commandFailed(name: string, error: unknown, stderr: TextOutput = PROCESS_IO.stderr): number {
  if (!isUbiError(error)) throw error;
  stderr.write(`ubicrawl ${name}: ${error.message} [${error.code}]\n`);
  return error.code === "UBI_ERR_INVALID_ARGUMENT" ? 2 : 1;
}
