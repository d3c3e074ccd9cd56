import { isUbiError } from "../errors.js";
import { agentCommand } from "./agent-command.js";
import { certsCommand } from "./certs-command.js";
import { clusterCommand } from "./cluster-command.js";
import { statsCommand } from "./stats-command.js";
import { testwebCommand } from "./testweb-command.js";

/** A subcommand: gets its arguments, returns the process exit code. */
type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { run: Command; summary: string }> = {
  agent: { run: agentCommand, summary: "run one crawler agent (alone, or joining a cluster)" },
  certs: { run: certsCommand, summary: "make the CA and certificates for mutual TLS between agents" },
  cluster: {
    run: clusterCommand,
    summary: "start the test web and N agents on this machine, watch and steer them",
  },
  stats: { run: statsCommand, summary: "show an agent's partition stats, or the whole cluster's" },
  testweb: { run: testwebCommand, summary: "serve the built-in synthetic test web on loopback" },
};

const USAGE = `Usage: ubicrawl <command> [flags]

A fully decentralized, peer-to-peer web crawler.

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(9)}${summary}`)
  .join("\n")}

Run 'ubicrawl <command> --help' for a command's flags.
`;

/** The CLI entry: dispatches to a subcommand; bad usage exits 2 with a one-line error. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`ubicrawl: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (isUbiError(error)) {
      process.stderr.write(`ubicrawl ${name}: ${error.message} [${error.code}]\n`);
      return error.code === "UBI_ERR_INVALID_ARGUMENT" ? 2 : 1;
    }
    throw error;
  }
}
