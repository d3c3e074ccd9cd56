import { ErrorCode, errorMessage, UbiError } from "../errors.js";
import { type FlagSpecs, formatHelp, parseFlags } from "../flags/index.js";
import type {
  AgentControlOutcome,
  ControlRequest,
  PeerClient,
  TransportSecurity,
} from "../transport/index.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";
import {
  explainCallFailure,
  GRPC_OPERATOR_LINK,
  OPERATOR_CONNECTION_FLAGS,
  type OperatorLink,
  securityFrom,
} from "./operator-connection.js";
import { acceptSeeds, readSeeds } from "./seeds.js";

const CTL_FLAGS = {
  agent: { type: "string", help: "address of the agent to command", placeholder: "HOST:PORT" },
  cluster: {
    type: "boolean",
    help: "apply the command to every live agent: the agent named relays it to the others over the cluster's own connections, so only its address need be reachable (add-seeds refuses it: the agent named routes each seed to its host's owner)",
  },
  force: {
    type: "boolean",
    help: "add-seeds only: queue each URL even when its owner has seen it before (dropped while its host was blacklisted, say), unless it is done already (fetched, or failed for good): nothing is fetched twice; prints what became of each URL",
  },
  ...OPERATOR_CONNECTION_FLAGS,
} as const satisfies FlagSpecs;

const USAGE = "ubicrawl ctl --agent HOST:PORT [--cluster] [--force] COMMAND [ARGUMENT...]";
const DESCRIPTION = `Steers a running crawl through an agent's Admin service (over mutual TLS, an operator
certificate is needed: ubicrawl certs writes operator.pem). Commands:
  pause                      stop starting fetches (those in flight finish; URL exchange and the
                             failure detector go on)
  resume                     fetch again after pause
  leave                      graceful departure: hand every host and queued URL to its next owner,
                             then exit 0
  blacklist-add PATTERN      fetch nothing more from the hosts of PATTERN: example.org (any port),
                             example.org:443, or *.example.org (every host below); their queued URLs
                             are dropped, but kept aside (10,000 a host at most; those beyond are
                             counted); the agent told passes it to every other, and agents that
                             join later get it too; kept in each agent's state across restarts
  blacklist-remove PATTERN   take PATTERN off the blacklist: the URLs kept aside for its hosts are
                             queued again by their owners (within --max-depth and --scope; none done
                             already); prints how many, and how many could not be restored (beyond
                             the cap, or dropped by a version that did not keep them)
  blacklist-list             print the blacklist's patterns (with --cluster, each agent's)
  add-seeds URL|FILE...      inject seeds into the running crawl: the agent named sends each to its
                             host's owner, so one agent reaches them all (no --cluster); an owner
                             skips a URL it has seen before, unless --force: then it queues it
                             unless done already, and each URL's outcome is printed
  set NAME=VALUE             change a setting until the agent stops: delay-ms (politeness delay, from
                             each host's next request) or max-active-hosts
Prints what each agent did; exits 1 when an agent refused or could not be reached, 2 on bad usage.`;

/**
 * What `ubicrawl ctl` is given rather than reaching for: a test runs it in its own process with them.
 * Each agent's outcome (and `--help`) is printed on `stdout`, the seeds add-seeds skips are told on
 * `stderr` (the process's by default: {@link PROCESS_IO}).
 */
export interface CtlDeps extends Partial<CommandIo> {
  /** How the agents are reached. @default {@link GRPC_OPERATOR_LINK} */
  readonly link?: OperatorLink;
}

/** The `Control` request of each command, from its arguments; `warn` tells what add-seeds skips. */
const COMMANDS: Readonly<
  Record<string, (args: readonly string[], warn: (line: string) => void) => Promise<ControlRequest>>
> = {
  pause: async (args) => noArguments("pause", args, { action: "PAUSE", argument: "" }),
  resume: async (args) => noArguments("resume", args, { action: "RESUME", argument: "" }),
  leave: async (args) => noArguments("leave", args, { action: "LEAVE", argument: "" }),
  "blacklist-add": async (args) => ({ action: "BLACKLIST_ADD", argument: onePattern("blacklist-add", args) }),
  "blacklist-remove": async (args) => ({
    action: "BLACKLIST_REMOVE",
    argument: onePattern("blacklist-remove", args),
  }),
  "blacklist-list": async (args) =>
    noArguments("blacklist-list", args, { action: "BLACKLIST_LIST", argument: "" }),
  set: async (args) => {
    if (args.length !== 1 || !/^[a-z-]+=/.test(args[0] as string)) {
      throw bad("set takes one NAME=VALUE, e.g. set delay-ms=500 or set max-active-hosts=32");
    }
    const value = (args[0] as string).slice((args[0] as string).indexOf("=") + 1);
    if (!/^\d+$/.test(value)) throw bad(`set: the value must be a whole number of 0 or more, got "${value}"`);
    return { action: "SET", argument: args[0] as string };
  },
  "add-seeds": async (args, warn) => {
    if (args.length === 0) throw bad("add-seeds needs URLs or files of one URL a line");
    const urls = acceptSeeds(await readSeeds(args, "add-seeds"), args, warn, "add-seeds");
    return { action: "ADD_SEEDS", argument: "", urls };
  },
};

/**
 * `ubicrawl ctl`: sends an operator command to one agent, or to every live agent; returns the exit
 * code (bad usage throws, as every command's does).
 */
export async function ctlCommand(argv: string[], deps: CtlDeps = {}): Promise<number> {
  const stdout = deps.stdout ?? PROCESS_IO.stdout;
  const stderr = deps.stderr ?? PROCESS_IO.stderr;
  const flags = parseFlags(argv, CTL_FLAGS);
  if (flags.help) {
    stdout.write(formatHelp(USAGE, DESCRIPTION, CTL_FLAGS));
    return 0;
  }
  if (flags.agent === undefined) throw bad("--agent is required");
  const [name, ...args] = flags.positionals;
  if (name === undefined) throw bad(`a command is required: ${Object.keys(COMMANDS).join(", ")}`);
  const build = COMMANDS[name];
  if (build === undefined) throw bad(`unknown command "${name}": ${Object.keys(COMMANDS).join(", ")}`);
  if (flags.cluster && name === "add-seeds") {
    // Sent to every agent, each seed would still go to one owner only: --cluster would only repeat it.
    throw bad(
      "add-seeds takes no --cluster: the agent named sends each seed to its host's owner, so seeds " +
        "given to any one agent reach every owner; drop --cluster",
    );
  }
  if (flags.force && name !== "add-seeds") throw bad(`--force is taken by add-seeds only, not ${name}`);
  const built = await build(args, (line) => stderr.write(`ubicrawl ctl: ${line}\n`));
  const request: ControlRequest = flags.force ? { ...built, force: true } : built;
  const operator: Operator = {
    link: deps.link ?? GRPC_OPERATOR_LINK,
    security: await securityFrom(flags),
    timeoutMs: flags["timeout-ms"],
  };
  const outcomes = flags.cluster
    ? await throughAgent(flags.agent, request, operator)
    : [await commandOne({ id: "", address: flags.agent }, request, operator)];
  for (const { line } of outcomes) stdout.write(`${line}\n`);
  return outcomes.every((outcome) => outcome.ok) ? 0 : 1;
}

/** How this command reaches agents: over which link, with which security, within which deadline. */
interface Operator {
  readonly link: OperatorLink;
  readonly security: TransportSecurity;
  readonly timeoutMs: number;
}

/** A client of the agent at `address`, for one command. */
function clientOf(address: string, { link, security, timeoutMs }: Operator): PeerClient {
  return link.transport.connect(address, { security, requestDeadlineMs: timeoutMs });
}

/** `error` of a call to the agent at `address`, explained as {@link explainCallFailure} does. */
function explained(error: unknown, address: string, { link, security }: Operator): Promise<unknown> {
  return explainCallFailure(error, address, security, link);
}

/** What one agent did with a command, as printed. */
interface Outcome {
  readonly ok: boolean;
  readonly line: string;
}

/** One agent's outcome line: its name, and what it did or why it refused. */
function outcomeLine(who: string, request: ControlRequest, ok: boolean, message: string): Outcome {
  const said =
    request.action === "BLACKLIST_LIST" && ok
      ? `blacklist: ${message === "" ? "(empty)" : message.split("\n").join(", ")}`
      : request.force === true && ok
        ? `seeds forced:\n  ${message.split("\n").join("\n  ")}`
        : message;
  return { ok, line: `${who}: ${ok ? "" : "refused: "}${said}` };
}

/** Sends `request` to the agent at `address` alone. */
async function commandOne(
  target: { id: string; address: string },
  request: ControlRequest,
  operator: Operator,
): Promise<Outcome> {
  const { id, address } = target;
  const who = id === "" ? address : `${id} (${address})`;
  const client = clientOf(address, operator);
  try {
    const reply = await client.control(request);
    return outcomeLine(who, request, reply.ok, reply.message);
  } catch (error) {
    return { ok: false, line: `${who}: failed: ${errorMessage(await explained(error, address, operator))}` };
  } finally {
    client.close();
  }
}

/**
 * Sends `request` to every live agent through the one at `address`, which relays it over the agents'
 * own connections (the operator need not reach the others' advertised addresses: behind a container
 * network or a Kubernetes Service, it cannot). An agent that predates the relay answers for itself
 * only: each live agent it knows is then dialed in turn.
 */
async function throughAgent(
  address: string,
  request: ControlRequest,
  operator: Operator,
): Promise<Outcome[]> {
  const client = clientOf(address, operator);
  let agents: AgentControlOutcome[] | undefined;
  try {
    agents = (await client.control({ ...request, cluster: true })).agents;
  } catch (error) {
    return [
      { ok: false, line: `${address}: failed: ${errorMessage(await explained(error, address, operator))}` },
    ];
  } finally {
    client.close();
  }
  if (agents !== undefined) {
    return agents.map((agent) =>
      outcomeLine(`${agent.id} (${agent.address})`, request, agent.ok, agent.message),
    );
  }
  const targets = await liveAgents(address, operator);
  return Promise.all(targets.map((target) => commandOne(target, request, operator)));
}

/** The live agents of the cluster, as the agent at `address` sees it. */
async function liveAgents(address: string, operator: Operator): Promise<{ id: string; address: string }[]> {
  const client = clientOf(address, operator);
  try {
    const { agents } = await client.operatorStats({ cluster: true });
    return agents.filter((stats) => stats.status === "ALIVE").map(({ id, address }) => ({ id, address }));
  } catch (error) {
    throw await explained(error, address, operator);
  } finally {
    client.close();
  }
}

function noArguments(name: string, args: readonly string[], request: ControlRequest): ControlRequest {
  if (args.length > 0) throw bad(`${name} takes no argument, got "${args[0]}"`);
  return request;
}

function onePattern(name: string, args: readonly string[]): string {
  if (args.length !== 1 || args[0] === "") {
    throw bad(`${name} takes one host pattern: example.org, example.org:443 or *.example.org`);
  }
  return args[0] as string;
}

function bad(message: string): UbiError {
  return new UbiError(ErrorCode.InvalidArgument, message);
}
