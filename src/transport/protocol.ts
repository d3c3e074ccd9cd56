/**
 * Loads `proto/ubicrawl.proto` at runtime and describes the `ubicrawl.v1.Agent` RPCs: their gRPC
 * method names and the validators for their requests and replies.
 */

import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSync, type Options, type PackageDefinition, type ServiceDefinition } from "@grpc/proto-loader";
import type { AgentServiceHandlers } from "./messages.js";
import {
  validateBlacklistSync,
  validateClaimReply,
  validateClaimRequest,
  validateControlReply,
  validateControlRequest,
  validateDigestCheck,
  validateDigestSettleAck,
  validateDigestSettlements,
  validateDigestVerdicts,
  validateHandOverReply,
  validateHandOverRequest,
  validateHeartbeatReply,
  validateHeartbeatRequest,
  validateIpReply,
  validateIpRequest,
  validateJoinReply,
  validateJoinRequest,
  validateStatsReply,
  validateStatsRequest,
  validateUrlBatch,
  validateUrlBatchAck,
} from "./validate.js";

/**
 * `proto/` sits at the project root, and this module is one level under it in both `src/transport/`
 * (vitest) and `dist/transport/` (built), so the same relative path works for both.
 */
export const PROTO_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "../../proto/ubicrawl.proto");

/** Fully qualified name of the agents' service. */
export const AGENT_SERVICE_NAME = "ubicrawl.v1.Agent";
/** Fully qualified name of the operators' service. */
export const ADMIN_SERVICE_NAME = "ubicrawl.v1.Admin";

/**
 * The two services every agent serves, and the certificate role each takes over mutual TLS: `Agent`
 * for other agents, `Admin` for operators.
 */
export type ServiceName = "Agent" | "Admin";

/** The certificate role a service takes (see `certificateRole`). */
export const SERVICE_ROLES: { readonly [S in ServiceName]: "agent" | "operator" } = {
  Agent: "agent",
  Admin: "operator",
};

/**
 * proto-loader options: camelCase fields; 64-bit integers as JS numbers (counters and durations
 * stay far below 2^53, and numbers are what the rest of the code computes with); enums by name;
 * defaults filled in so absent scalars read as 0/""/false and absent messages as null.
 */
export const LOADER_OPTIONS: Readonly<Options> = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cached: PackageDefinition | undefined;

/** The loaded package definition of `proto/ubicrawl.proto` (loaded once, then cached). */
export function loadProtocol(): PackageDefinition {
  cached ??= loadSync(PROTO_PATH, { ...LOADER_OPTIONS });
  return cached;
}

/** The `ubicrawl.v1.Agent` service definition, keyed by proto method name (`SubmitUrls`). */
export function agentServiceDefinition(): ServiceDefinition {
  return serviceDefinition("Agent");
}

/** The definition of `ubicrawl.v1.<service>`, keyed by proto method name. */
export function serviceDefinition(service: ServiceName): ServiceDefinition {
  return loadProtocol()[service === "Agent" ? AGENT_SERVICE_NAME : ADMIN_SERVICE_NAME] as ServiceDefinition;
}

/**
 * The unary RPCs also carried on a long-lived stream per peer (a message each way instead of a call),
 * with the proto name of that streaming rpc. A stream has no handler of its own: the server answers
 * each message with the unary RPC's handler, tagged with the request's `sequence` (see `AgentServer`).
 */
export const STREAMED_RPCS = { heartbeat: "HeartbeatStream", checkDigests: "DigestStream" } as const;

/** A unary RPC that also has a stream form ({@link STREAMED_RPCS}). */
export type StreamedRpc = keyof typeof STREAMED_RPCS;

/** The name of a unary RPC, as a key of {@link AgentServiceHandlers}. */
export type RpcName = keyof AgentServiceHandlers;

/** The request type of an RPC. */
export type RequestOf<K extends RpcName> = Parameters<AgentServiceHandlers[K]>[0];

/** The reply type of an RPC. */
export type ReplyOf<K extends RpcName> = Awaited<ReturnType<AgentServiceHandlers[K]>>;

/** How one RPC is named in the proto and how its messages are validated. */
export interface RpcSpec<K extends RpcName> {
  /** Method name in the proto (`SubmitUrls`). */
  method: string;
  /** The services that serve it (`getStats`: both, for agents and for operators). */
  services: readonly ServiceName[];
  /** Checks a decoded request. */
  validateRequest(value: unknown): RequestOf<K>;
  /** Checks a decoded reply. */
  validateReply(value: unknown): ReplyOf<K>;
}

/** Every unary RPC an agent serves, on the `Agent` or `Admin` service (or both). */
export const AGENT_RPCS: { readonly [K in RpcName]: RpcSpec<K> } = {
  join: {
    method: "Join",
    services: ["Agent"],
    validateRequest: validateJoinRequest,
    validateReply: validateJoinReply,
  },
  heartbeat: {
    method: "Heartbeat",
    services: ["Agent"],
    validateRequest: validateHeartbeatRequest,
    validateReply: validateHeartbeatReply,
  },
  submitUrls: {
    method: "SubmitUrls",
    services: ["Agent"],
    validateRequest: validateUrlBatch,
    validateReply: validateUrlBatchAck,
  },
  claimHosts: {
    method: "ClaimHosts",
    services: ["Agent"],
    validateRequest: validateClaimRequest,
    validateReply: validateClaimReply,
  },
  handOverHosts: {
    method: "HandOverHosts",
    services: ["Agent"],
    validateRequest: validateHandOverRequest,
    validateReply: validateHandOverReply,
  },
  getStats: {
    method: "GetStats",
    services: ["Agent", "Admin"],
    validateRequest: validateStatsRequest,
    validateReply: validateStatsReply,
  },
  control: {
    method: "Control",
    services: ["Agent", "Admin"],
    validateRequest: validateControlRequest,
    validateReply: validateControlReply,
  },
  syncBlacklist: {
    method: "SyncBlacklist",
    services: ["Agent"],
    validateRequest: validateBlacklistSync,
    validateReply: validateBlacklistSync,
  },
  checkDigests: {
    method: "CheckDigests",
    services: ["Agent"],
    validateRequest: validateDigestCheck,
    validateReply: validateDigestVerdicts,
  },
  settleDigests: {
    method: "SettleDigests",
    services: ["Agent"],
    validateRequest: validateDigestSettlements,
    validateReply: validateDigestSettleAck,
  },
  ipGrants: {
    method: "IpGrants",
    services: ["Agent"],
    validateRequest: validateIpRequest,
    validateReply: validateIpReply,
  },
};

/** The RPC names, in proto order. */
export const RPC_NAMES = Object.keys(AGENT_RPCS) as RpcName[];
