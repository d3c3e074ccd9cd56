/**
 * The one place where ubicrawl error codes and gRPC status codes meet: handler errors become a
 * status on the server, and a failed call becomes a `UbiError` on the client.
 */

import { type ServiceError, status } from "@grpc/grpc-js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";

/** A gRPC status to answer with. */
export interface GrpcStatus {
  /** The `grpc.status` code. */
  code: status;
  /** Text sent as the status details. */
  details: string;
}

/**
 * The status for an error thrown by a handler: IdConflict → ALREADY_EXISTS; PermissionDenied → PERMISSION_DENIED; BadMessage, InvalidUrl,
 * InvalidArgument → INVALID_ARGUMENT; StorageFailed, Overloaded → UNAVAILABLE; Leaving →
 * FAILED_PRECONDITION; anything else → INTERNAL.
 */
export function statusForError(error: unknown): GrpcStatus {
  if (!isUbiError(error)) {
    // Unexpected failures are bugs: say so without leaking internals to the peer.
    return { code: status.INTERNAL, details: "internal error in the agent" };
  }
  switch (error.code) {
    case ErrorCode.IdConflict:
      return { code: status.ALREADY_EXISTS, details: error.message };
    case ErrorCode.BadMessage:
    case ErrorCode.InvalidUrl:
    case ErrorCode.InvalidArgument:
      return { code: status.INVALID_ARGUMENT, details: error.message };
    case ErrorCode.StorageFailed:
    case ErrorCode.Overloaded:
      return { code: status.UNAVAILABLE, details: error.message };
    case ErrorCode.PermissionDenied:
      return { code: status.PERMISSION_DENIED, details: error.message };
    case ErrorCode.Leaving:
      return { code: status.FAILED_PRECONDITION, details: error.message };
    default:
      return { code: status.INTERNAL, details: error.message };
  }
}

/** True when `error` looks like a grpc-js `ServiceError` (an Error with a numeric status code). */
export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number";
}

/**
 * The `UbiError` for a failed call to `address`: ALREADY_EXISTS → IdConflict; PERMISSION_DENIED → PermissionDenied; FAILED_PRECONDITION →
 * Leaving (the peer is leaving the cluster); INVALID_ARGUMENT and
 * RESOURCE_EXHAUSTED (the peer refused what we sent) → BadMessage; anything else (refused, reset,
 * timed out, failed inside the peer) → PeerUnreachable. The grpc error is kept as `cause`.
 */
export function errorFromStatus(error: ServiceError, address: string, method: string): UbiError {
  const where = `${method} to ${address}`;
  const details = readableDetails(error.details);
  switch (error.code) {
    case status.ALREADY_EXISTS:
      return new UbiError(ErrorCode.IdConflict, `${where} refused: ${details}`, { cause: error });
    case status.INVALID_ARGUMENT:
    case status.RESOURCE_EXHAUSTED:
      return new UbiError(ErrorCode.BadMessage, `${where} refused: ${details}`, { cause: error });
    case status.PERMISSION_DENIED:
      return new UbiError(ErrorCode.PermissionDenied, `${where} refused: ${details}`, { cause: error });
    case status.FAILED_PRECONDITION:
      return new UbiError(ErrorCode.Leaving, `${where} refused: ${details}`, { cause: error });
    default:
      return new UbiError(
        ErrorCode.PeerUnreachable,
        `${where} failed: ${status[error.code] ?? error.code} ${details}`,
        { cause: error },
      );
  }
}

/** grpc-js ends a failed connection's details with "Resolution note: " even when it has no note. */
function readableDetails(details: string): string {
  return details.replace(/\.?\s*Resolution note:\s*$/, "");
}

/** The grpc status code carried in the `cause` of a transport `UbiError`, if any. */
export function grpcStatusOf(error: unknown): status | undefined {
  const cause = error instanceof Error ? error.cause : undefined;
  return isServiceError(cause) ? cause.code : undefined;
}
