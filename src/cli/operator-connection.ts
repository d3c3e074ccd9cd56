import { readFile } from "node:fs/promises";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import type { FlagSpecs } from "../flags/index.js";
import { diagnoseTransport, type TlsDiagnosis } from "../security/diagnose-tls.js";
import { GRPC_TRANSPORT, INSECURE, type PeerTransport, type TransportSecurity } from "../transport/index.js";
import { checkTlsMaterial } from "../transport/security.js";

/**
 * How an operator's command reaches agents: its clients of their `Admin` service, and the probe that
 * says in words why an agent could not be reached. {@link GRPC_OPERATOR_LINK} by default; a test gives
 * a `MemoryNetwork`'s transport instead, to steer agents running in its own process.
 */
export interface OperatorLink {
  /** Connects the operator's clients (an operator serves nothing: only `connect` is used). */
  readonly transport: PeerTransport;
  /** Probes the agent at `address` after a call could not reach it (see {@link explainCallFailure}). */
  readonly diagnose: (address: string, security: TransportSecurity) => Promise<TlsDiagnosis>;
}

/** gRPC, plaintext or mutual TLS, and the TLS (or HTTP/2 preface) probe of an unreachable agent. */
export const GRPC_OPERATOR_LINK: OperatorLink = {
  transport: GRPC_TRANSPORT,
  diagnose: (address, security) => diagnoseTransport(address, security),
};

/** How an operator's command (`stats`, `ctl`) reaches an agent's `Admin` service. */
export const OPERATOR_CONNECTION_FLAGS = {
  "timeout-ms": { type: "integer", help: "deadline of each request", default: 10_000, min: 100 },
  insecure: { type: "boolean", help: "plaintext gRPC (the agents run with --insecure)" },
  "tls-ca": { type: "string", help: "PEM of the cluster CA", placeholder: "FILE" },
  "tls-cert": {
    type: "string",
    help: "PEM operator certificate signed by the cluster CA (ubicrawl certs writes operator.pem)",
    placeholder: "FILE",
  },
  "tls-key": { type: "string", help: "PEM private key of the operator certificate", placeholder: "FILE" },
} as const satisfies FlagSpecs;

/** The security of an operator's client from `--insecure` / `--tls-*` flags (same rules as the agent's). */
export async function securityFrom(flags: {
  insecure: boolean;
  "tls-ca"?: string | undefined;
  "tls-cert"?: string | undefined;
  "tls-key"?: string | undefined;
}): Promise<TransportSecurity> {
  const paths = [flags["tls-ca"], flags["tls-cert"], flags["tls-key"]];
  if (paths.every((path) => path !== undefined)) {
    if (flags.insecure)
      throw new UbiError(ErrorCode.InvalidArgument, "--insecure and --tls-* exclude each other");
    const [caPem, certPem, keyPem] = await Promise.all(paths.map((path) => readPem(path as string)));
    const security = {
      kind: "tls",
      caPem: caPem as string,
      certPem: certPem as string,
      keyPem: keyPem as string,
    } as const;
    // A key of another certificate, or a file that is not PEM, is said in words, as the agent says it.
    checkTlsMaterial(security, {
      ca: `--tls-ca ${flags["tls-ca"]}`,
      cert: `--tls-cert ${flags["tls-cert"]}`,
      key: `--tls-key ${flags["tls-key"]}`,
    });
    return security;
  }
  if (paths.some((path) => path !== undefined)) {
    throw new UbiError(
      ErrorCode.InvalidArgument,
      "mutual TLS needs all three of --tls-ca, --tls-cert and --tls-key",
    );
  }
  if (flags.insecure) return INSECURE;
  throw new UbiError(ErrorCode.InvalidArgument, "give --tls-ca/--tls-cert/--tls-key, or --insecure");
}

async function readPem(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UbiError(ErrorCode.InvalidArgument, `cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * `error` of a call to the agent at `address` made with `security`, explained: gRPC reports a TLS
 * handshake that failed (plaintext against TLS, another cluster's CA, an agent certificate refused) as
 * a bare "unavailable", so an unreachable agent is probed the same way, and the error says what the
 * probe found and what to do. Any other error is returned as it is. `link` probes the agent.
 */
export async function explainCallFailure(
  error: unknown,
  address: string,
  security: TransportSecurity,
  link: Pick<OperatorLink, "diagnose"> = GRPC_OPERATOR_LINK,
): Promise<unknown> {
  if (!isUbiError(error, ErrorCode.PeerUnreachable)) return error;
  const diagnosis = await link.diagnose(address, security);
  if (diagnosis.ok) return error;
  return new UbiError(
    ErrorCode.PeerUnreachable,
    `cannot reach the agent at ${address}: ${diagnosis.message}`,
    {
      cause: error,
    },
  );
}
