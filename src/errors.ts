/**
 * Every error ubicrawl raises on purpose is a {@link UbiError} with a stable `code`, so callers and
 * tests branch on codes, never on messages. Across gRPC these map to `grpc.status` codes.
 */

/** Stable error codes. Grouped by subsystem; the fetch classes double as the stats' error classes. */
export const ErrorCode = {
  /** A command-line flag or option value is invalid. */
  InvalidArgument: "UBI_ERR_INVALID_ARGUMENT",
  /** A URL could not be parsed or is not http(s). */
  InvalidUrl: "UBI_ERR_INVALID_URL",
  /** A host name is not in the hosts file (with `--hosts-file`) or does not resolve. */
  DnsNotFound: "UBI_ERR_DNS_NOT_FOUND",
  /** The resolved address is outside the networks the agent may reach (`--allow-net`). */
  AddressForbidden: "UBI_ERR_ADDRESS_FORBIDDEN",
  /** TCP connect did not complete in time. */
  ConnectTimeout: "UBI_ERR_CONNECT_TIMEOUT",
  /** A TLS handshake failed: the server's certificate could not be verified, or TLS itself failed. */
  TlsFailed: "UBI_ERR_TLS",
  /** The server refused or reset the connection. */
  ConnectFailed: "UBI_ERR_CONNECT_FAILED",
  /**
   * A request was not written: its address's slot lapsed while it was on its way (the authority counts
   * a slot's start within its slack of the grant). Nothing reached the server: it asks again.
   */
  StartLapsed: "UBI_ERR_START_LAPSED",
  /** Response headers did not arrive in time. */
  HeadersTimeout: "UBI_ERR_HEADERS_TIMEOUT",
  /** The body stalled or took longer than the whole-fetch deadline. */
  BodyTimeout: "UBI_ERR_BODY_TIMEOUT",
  /** The body came slower than the fetcher's minimum rate (`--min-bytes-per-s`) over a whole window. */
  TooSlow: "UBI_ERR_TOO_SLOW",
  /** The body (raw or decoded) exceeded the size cap. */
  BodyTooLarge: "UBI_ERR_BODY_TOO_LARGE",
  /** Content-Encoding could not be decoded. */
  DecodeFailed: "UBI_ERR_DECODE_FAILED",
  /** The server broke the HTTP protocol (malformed headers, bad length, reset mid-body). */
  ProtocolError: "UBI_ERR_PROTOCOL",
  /** A redirect chain was longer than allowed or a redirect had no usable `Location` (robots.txt). */
  TooManyRedirects: "UBI_ERR_TOO_MANY_REDIRECTS",
  /** The local state (LevelDB, WARC files, log) could not be written. */
  StorageFailed: "UBI_ERR_STORAGE",
  /** The state store is damaged (LevelDB found a bad block or checksum): `ubicrawl repair` it. */
  StorageCorrupt: "UBI_ERR_STORAGE_CORRUPT",
  /** A peer could not be reached or did not answer in time. */
  PeerUnreachable: "UBI_ERR_PEER_UNREACHABLE",
  /** A peer sent a message that fails validation. */
  BadMessage: "UBI_ERR_BAD_MESSAGE",
  /** The component was stopped while the operation waited (a shutdown, not a failure). */
  Stopped: "UBI_ERR_STOPPED",
  /** Another live agent already uses this id, or this id's replicas collide with another agent's. */
  IdConflict: "UBI_ERR_ID_CONFLICT",
  /** A server could not listen on its address(es) (port in use, address not available). */
  ListenFailed: "UBI_ERR_LISTEN_FAILED",
  /** An agent has too many requests of this kind in progress: back off and retry (not a refusal). */
  Overloaded: "UBI_ERR_OVERLOADED",
  /** The agent called is leaving the cluster and takes nothing more in: hand it to another agent. */
  Leaving: "UBI_ERR_LEAVING",
  /** Certificates could not be created or loaded (openssl missing or failing, a CA without its key). */
  CertificateFailed: "UBI_ERR_CERTIFICATE",
  /** The data dir is open in another running agent (its LevelDB lock is held). */
  DataDirInUse: "UBI_ERR_DATA_DIR_IN_USE",
  /** The data dir holds the crawl of another agent id than the one starting on it. */
  DataDirOfAnotherAgent: "UBI_ERR_DATA_DIR_OTHER_AGENT",
  /** The caller's certificate is not of the role the call needs (an agent's on `Admin`, an operator's on `Agent`). */
  PermissionDenied: "UBI_ERR_PERMISSION_DENIED",
  /** A crawl ended without fetching a page: every URL it tried failed (the reasons are in the message). */
  NothingFetched: "UBI_ERR_NOTHING_FETCHED",
  /** A laboratory crawl did not run to its end: an agent failed, or it passed its time limit. */
  ExperimentFailed: "UBI_ERR_EXPERIMENT",
} as const;

/** One of the {@link ErrorCode} values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** An error with a stable code and an optional cause. */
export class UbiError extends Error {
  override readonly name = "UbiError";

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** True when `error` is a {@link UbiError}, optionally with the given code. */
export function isUbiError(error: unknown, code?: ErrorCode): error is UbiError {
  return error instanceof UbiError && (code === undefined || error.code === code);
}

/** Throws an {@link ErrorCode.InvalidArgument} error. */
export function invalidArgument(message: string): never {
  throw new UbiError(ErrorCode.InvalidArgument, message);
}

/** The message of `error`, or its string form when it is not an `Error`. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The message of `error` followed by those of its causes (`a: caused by b: caused by c`), at most 5 deep. */
export function errorChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    parts.push(errorMessage(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": caused by ");
}
