import { expect, it } from "vitest";
import { controlCluster } from "../../src/cluster/cluster-control.js";
import type { ControlReply, ControlRequest } from "../../src/transport/index.js";

/**
 * An operator command for the whole cluster, asked of one agent: applied there and relayed to every
 * other live agent, each outcome reported; a leave relayed before the agent asked leaves itself.
 */

const SELF = { id: "a1", address: "10.0.0.1:7000" };
const OTHERS = [
  { id: "a2", address: "10.0.0.2:7000" },
  { id: "a3", address: "10.0.0.3:7000" },
];

function setUp(relayReply: (address: string) => Promise<ControlReply>) {
  const events: string[] = [];
  const relayed: ControlRequest[] = [];
  const deps = {
    self: SELF,
    applyHere: async (request: ControlRequest): Promise<ControlReply> => {
      events.push(`here ${request.action}${request.cluster ? " cluster" : ""}`);
      return { ok: true, message: "done here" };
    },
    others: () => OTHERS,
    relay: async (address: string, request: ControlRequest) => {
      events.push(`relay ${address}`);
      relayed.push(request);
      return relayReply(address);
    },
  };
  return { deps, events, relayed };
}

it("applies the command here and on every other live agent, without relaying `cluster` further", async () => {
  const { deps, relayed } = setUp(async () => ({ ok: true, message: "paused" }));
  const reply = await controlCluster({ action: "PAUSE", argument: "", cluster: true }, deps);
  expect(reply).toEqual({
    ok: true,
    message: "3 of 3 agents applied PAUSE",
    agents: [
      { ...SELF, ok: true, message: "done here" },
      { ...OTHERS[0], ok: true, message: "paused" },
      { ...OTHERS[1], ok: true, message: "paused" },
    ],
  });
  expect(relayed.every((request) => request.cluster === undefined)).toBe(true);
});

it("reports an agent that refused or could not be reached, and is not ok then", async () => {
  const { deps } = setUp(async (address) => {
    if (address === OTHERS[0]?.address) throw new Error("connection refused");
    return { ok: false, message: "unknown setting" };
  });
  const reply = await controlCluster({ action: "SET", argument: "x=1", cluster: true }, deps);
  expect(reply.ok).toBe(false);
  expect(reply.message).toBe("1 of 3 agents applied SET");
  expect(reply.agents?.slice(1)).toEqual([
    { ...OTHERS[0], ok: false, message: "not relayed: connection refused" },
    { ...OTHERS[1], ok: false, message: "unknown setting" },
  ]);
});

it("relays a leave before leaving itself, so it is still there to answer", async () => {
  const { deps, events } = setUp(async () => ({ ok: true, message: "leaving" }));
  await controlCluster({ action: "LEAVE", argument: "", cluster: true }, deps);
  expect(events).toEqual([`relay ${OTHERS[0]?.address}`, `relay ${OTHERS[1]?.address}`, "here LEAVE"]);
});
