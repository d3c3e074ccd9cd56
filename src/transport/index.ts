/** The agent-to-agent gRPC transport: protocol, server, peer clients, credentials. */

export { formatHostPort, type HostPort, parseHostPort } from "./address.js";
export { AgentServer, type AgentServerDependencies, type AgentServerOptions } from "./agent-server.js";
export { ArchiveClient } from "./archive-client.js";
export type { ArchiveFileInfo, ArchiveListing, ArchiveSource } from "./archive-service.js";
export { type CertificateRole, certificateRole } from "./certificate-roles.js";
export {
  AGENT_ID_PATTERN,
  DEFAULT_MAX_MESSAGE_BYTES,
  MAX_BATCH_ID_CHARS,
  MAX_CONTROL_ARGUMENT_CHARS,
  MAX_DIGESTS_PER_MESSAGE,
  MAX_DONE_BYTES,
  MAX_HOSTS_PER_HAND_OVER,
  MAX_ID_CHARS,
  MAX_IP_ENTRIES,
  MAX_MEMBERS,
  MAX_PAGE_SCHEDULE_BYTES,
  MAX_RECRAWL_BUDGET,
  MAX_REPLY_MESSAGE_CHARS,
  MAX_URL_CHARS,
  MAX_URLS_PER_BATCH,
  pageScheduleBytes,
} from "./limits.js";
export { type LinkRule, MemoryNetwork, type MemoryNetworkDeps } from "./memory-network.js";
export * from "./messages.js";
export { type PeerCallOptions, PeerClient, type PeerClientOptions } from "./peer-client.js";
export { PeerClientPool } from "./peer-client-pool.js";
export { GRPC_TRANSPORT, type PeerServer, type PeerTransport } from "./peer-transport.js";
export {
  AGENT_SERVICE_NAME,
  LOADER_OPTIONS,
  loadProtocol,
  PROTO_PATH,
  RPC_NAMES,
  type RpcName,
} from "./protocol.js";
export {
  INSECURE,
  type InsecureTransport,
  type MutualTlsTransport,
  type TransportSecurity,
} from "./security.js";
export { grpcStatusOf } from "./status-mapping.js";
export { validateMember } from "./validate.js";
