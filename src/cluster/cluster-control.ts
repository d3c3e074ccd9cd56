import { errorMessage } from "../errors.js";
import type { AgentControlOutcome, ControlReply, ControlRequest } from "../transport/index.js";

/** What {@link controlCluster} needs. */
export interface ClusterControlDeps {
  /** This agent's id and address, for its own outcome. */
  readonly self: { readonly id: string; readonly address: string };
  /** Applies the command to this agent. */
  readonly applyHere: (request: ControlRequest) => Promise<ControlReply>;
  /** The other live agents now. */
  readonly others: () => readonly { readonly id: string; readonly address: string }[];
  /** Relays the command to one of them (`Agent.Control`, without `cluster`). */
  readonly relay: (address: string, request: ControlRequest) => Promise<ControlReply>;
}

/**
 * An operator command for the whole cluster (`Control` with `cluster`), asked of one agent: applied
 * here and relayed to every other live agent over the agents' own connections, so an operator who
 * can reach one agent (a port-forward, a container network, a Kubernetes Service) reaches them all.
 * A leave is relayed first, this agent leaving last, so it is still there to answer. The reply lists
 * each agent's outcome; it is ok when every agent applied the command.
 */
export async function controlCluster(
  request: ControlRequest,
  deps: ClusterControlDeps,
): Promise<ControlReply> {
  const { cluster: _applied, ...command } = request;
  const others = deps.others();
  const relayed = () =>
    Promise.all(
      others.map(async ({ id, address }): Promise<AgentControlOutcome> => {
        try {
          const reply = await deps.relay(address, command);
          return { id, address, ok: reply.ok, message: reply.message };
        } catch (error) {
          return { id, address, ok: false, message: `not relayed: ${errorMessage(error)}` };
        }
      }),
    );
  const here = async (): Promise<AgentControlOutcome> => {
    const reply = await deps.applyHere(command);
    return { ...deps.self, ok: reply.ok, message: reply.message };
  };
  let agents: AgentControlOutcome[];
  if (command.action === "LEAVE") {
    const elsewhere = await relayed();
    agents = [await here(), ...elsewhere];
  } else {
    const [own, elsewhere] = await Promise.all([here(), relayed()]);
    agents = [own, ...elsewhere];
  }
  const applied = agents.filter((agent) => agent.ok).length;
  return {
    ok: applied === agents.length,
    message: `${applied} of ${agents.length} agents applied ${command.action}`,
    agents,
  };
}
