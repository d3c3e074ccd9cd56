import { ErrorCode, isUbiError, UbiError } from "../errors.js";

/** Socket-level failures that mean the server could not be reached or dropped the connection early. */
const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EHOSTDOWN",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "EPIPE",
  "ETIMEDOUT",
]);

/**
 * Maps any error a fetch can raise (undici, socket, zlib, ours) to the {@link ErrorCode} it counts as.
 * `afterHeaders` says whether response headers had arrived: a reset before them is `ConnectFailed`,
 * after them (mid-body) `ProtocolError`.
 */
export function classifyFetchError(error: unknown, afterHeaders = false): ErrorCode {
  if (isUbiError(error)) return error.code;
  if (typeof error !== "object" || error === null)
    return afterHeaders ? ErrorCode.ProtocolError : ErrorCode.ConnectFailed;
  // undici's parser errors do not always carry an HPE_* code.
  if ((error as { name?: unknown }).name === "HTTPParserError") return ErrorCode.ProtocolError;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return afterHeaders ? ErrorCode.ProtocolError : ErrorCode.ConnectFailed;
  switch (code) {
    case "UND_ERR_CONNECT_TIMEOUT":
      return ErrorCode.ConnectTimeout;
    case "UND_ERR_HEADERS_TIMEOUT":
      return ErrorCode.HeadersTimeout;
    case "UND_ERR_BODY_TIMEOUT":
      return ErrorCode.BodyTimeout;
    case "UND_ERR_RES_EXCEEDED_MAX_SIZE":
      return ErrorCode.BodyTooLarge;
    case "ENOTFOUND":
    case "ENODATA":
    case "EAI_NONAME":
    case "EAI_AGAIN":
    case "EAI_FAIL":
      return ErrorCode.DnsNotFound;
    case "Z_DATA_ERROR":
    case "Z_BUF_ERROR":
      return ErrorCode.DecodeFailed;
    case "UND_ERR_SOCKET":
      return afterHeaders ? ErrorCode.ProtocolError : ErrorCode.ConnectFailed;
  }
  // Brotli reports ERR__ERROR_FORMAT_* codes.
  if (code.startsWith("ERR__ERROR_")) return ErrorCode.DecodeFailed;
  if (CONNECT_CODES.has(code)) return afterHeaders ? ErrorCode.ProtocolError : ErrorCode.ConnectFailed;
  // llhttp parse errors (HPE_*), header overflow, content-length mismatch: the server broke HTTP.
  if (code.startsWith("HPE_") || code.startsWith("UND_ERR_")) return ErrorCode.ProtocolError;
  if (isTlsFailure(code)) return ErrorCode.TlsFailed;
  return afterHeaders ? ErrorCode.ProtocolError : ErrorCode.ConnectFailed;
}

/** OpenSSL's certificate verification results that name neither CERT nor a TLS/SSL prefix. */
const VERIFY_CODES = new Set(["HOSTNAME_MISMATCH", "INVALID_CA", "PATH_LENGTH_EXCEEDED", "INVALID_PURPOSE"]);

/**
 * A TLS handshake or certificate failure (Node's ERR_TLS_*, OpenSSL's ERR_SSL_* and its X509 verify
 * results such as UNABLE_TO_VERIFY_LEAF_SIGNATURE or CERT_HAS_EXPIRED): retrying cannot help, and the
 * URL is never fetched over plain HTTP instead.
 */
function isTlsFailure(code: string): boolean {
  return (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("ERR_SSL_") ||
    code.startsWith("UNABLE_TO_") ||
    code.includes("CERT") ||
    VERIFY_CODES.has(code)
  );
}

/** Why a fetch failed, in the words of the innermost error (e.g. "self-signed certificate in certificate chain"). */
export function failureReason(error: unknown): string {
  let inner = error;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  return inner instanceof Error ? inner.message : String(inner);
}

/** Wraps `error` as a {@link UbiError} with its classified code and the original as `cause`. */
export function toFetchError(error: unknown, url: string, afterHeaders: boolean): UbiError {
  if (isUbiError(error)) return error;
  const code = classifyFetchError(error, afterHeaders);
  const detail = error instanceof Error ? error.message : String(error);
  return new UbiError(code, `fetch ${url}: ${detail}`, { cause: error });
}
