/**
 * How an agent answers one request, whatever carried it: the raw message decoded and validated field by
 * field, then given to its handler. The gRPC server ({@link AgentServer}) and a `MemoryNetwork` both
 * answer through here, so a cluster in one process sees exactly the checks a real one does.
 */

import { ErrorCode, UbiError } from "../errors.js";
import type { AgentServiceHandlers } from "./messages.js";
import { AGENT_RPCS, type ReplyOf, type RequestOf, type RpcName } from "./protocol.js";
import { Undecodable } from "./tolerant-decode.js";

/** Throws `UbiError(InvalidArgument)` unless `handlers` has a function for every RPC. */
export function checkHandlers(handlers: AgentServiceHandlers): void {
  for (const name of Object.keys(AGENT_RPCS) as RpcName[]) {
    if (typeof handlers?.[name] !== "function") {
      throw new UbiError(ErrorCode.InvalidArgument, `handlers.${name} must be a function`);
    }
  }
}

/** The validated request of RPC `name` from its decoded message, or `UbiError(BadMessage)`. */
export function decodeRequest<K extends RpcName>(name: K, raw: unknown): RequestOf<K> {
  if (raw instanceof Undecodable) {
    throw new UbiError(ErrorCode.BadMessage, `undecodable ${AGENT_RPCS[name].method} request: ${raw.reason}`);
  }
  return AGENT_RPCS[name].validateRequest(raw);
}

/**
 * The reply of `handlers` to RPC `name`'s decoded message `raw` (validated first). Rejects with the
 * handler's error; a handler that resolves to no object is a bug, and rejects with a plain `Error`.
 */
export async function answerRequest<K extends RpcName>(
  handlers: AgentServiceHandlers,
  name: K,
  raw: unknown,
): Promise<ReplyOf<K>> {
  return handleRequest(handlers, name, decodeRequest(name, raw));
}

/** The reply of `handlers` to RPC `name`'s validated `request` (see {@link answerRequest}). */
export async function handleRequest<K extends RpcName>(
  handlers: AgentServiceHandlers,
  name: K,
  request: RequestOf<K>,
): Promise<ReplyOf<K>> {
  // Called as a method so class-based handlers keep their `this`.
  const handler = handlers[name] as unknown as (request: RequestOf<K>) => Promise<ReplyOf<K>>;
  const reply = await handler.call(handlers, request);
  if (typeof reply !== "object" || reply === null) {
    throw new Error(`handler ${name} returned no reply`);
  }
  return reply;
}
