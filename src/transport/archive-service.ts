import { once } from "node:events";
import type { Readable } from "node:stream";
import type {
  ServerUnaryCall,
  ServerWritableStream,
  sendUnaryData,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { ErrorCode, UbiError } from "../errors.js";
import { statusForError } from "./status-mapping.js";
import { Undecodable } from "./tolerant-decode.js";

/**
 * The `Admin` service's archive methods: `ListArchive` (an agent's WARC files and their indexes) and
 * `ReadArchiveFile` (one of them, streamed with flow control, so neither side holds a file in memory),
 * for `ubicrawl export --agent`. Served over an {@link ArchiveSource}, the agent's WARC folder.
 */

/** Bytes of a file in each `ArchiveChunk`. */
export const ARCHIVE_CHUNK_BYTES = 256 * 1024;

/** One WARC file of an agent's archive, as `ListArchive` lists it. */
export interface ArchiveFileInfo {
  /** Its finished name. */
  readonly name: string;
  /** Its length; of the live file, its whole records appended so far. */
  readonly bytes: number;
  /** Its CDXJ index's length, 0 when it has none. */
  readonly indexBytes: number;
  /** The file being written. */
  readonly live: boolean;
}

/** An agent's archive. */
export interface ArchiveListing {
  readonly agentId: string;
  readonly files: readonly ArchiveFileInfo[];
}

/** What the archive methods serve from: the agent's WARC folder. */
export interface ArchiveSource {
  /** Every WARC file of the folder, ordered by name. */
  list(): Promise<ArchiveListing>;
  /**
   * The first `bytes` of file `name` of the listing (a WARC file, or its index `<name>.cdxj`), the
   * whole file when `bytes` is 0, in chunks of at most `chunkBytes`.
   * @throws UbiError InvalidArgument for a name that is not one of the listing's files.
   */
  open(name: string, bytes: number, chunkBytes: number): Promise<Readable>;
}

/** Why a caller may not use the `Admin` service, or undefined (the server's role check). */
type RoleCheck = (
  call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>,
) => UbiError | undefined;

/** The implementations of `ListArchive` and `ReadArchiveFile` over `source` (none: UNIMPLEMENTED). */
export function archiveImplementation(
  source: ArchiveSource | undefined,
  roleRefusal: RoleCheck,
  report: (rpc: string, error: unknown) => void,
): UntypedServiceImplementation {
  const absent = new UbiError(ErrorCode.InvalidArgument, "this agent serves no archive");
  return {
    ListArchive: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const refusal = roleRefusal(call) ?? (source === undefined ? absent : undefined);
      if (refusal !== undefined || source === undefined) {
        callback(statusForError(refusal));
        return;
      }
      source.list().then(
        (listing) => callback(null, listing),
        (error: unknown) => {
          if (!(error instanceof UbiError)) report("ListArchive", error);
          callback(statusForError(error));
        },
      );
    },
    ReadArchiveFile: (call: ServerWritableStream<unknown, unknown>) => {
      const refusal = roleRefusal(call) ?? (source === undefined ? absent : undefined);
      if (refusal !== undefined || source === undefined) {
        call.emit("error", statusForError(refusal));
        return;
      }
      streamFile(source, call).catch((error: unknown) => {
        if (!(error instanceof UbiError)) report("ReadArchiveFile", error);
        call.emit("error", statusForError(error));
      });
    },
  };
}

/** Writes the file `call` asks for to it, waiting for the client whenever gRPC's buffer is full. */
async function streamFile(
  source: ArchiveSource,
  call: ServerWritableStream<unknown, unknown>,
): Promise<void> {
  const request = call.request as { name?: unknown; bytes?: unknown } | Undecodable;
  if (request instanceof Undecodable || typeof request.name !== "string") {
    throw new UbiError(ErrorCode.BadMessage, "undecodable ReadArchiveFile request");
  }
  const bytes = typeof request.bytes === "number" && Number.isSafeInteger(request.bytes) ? request.bytes : -1;
  if (bytes < 0) throw new UbiError(ErrorCode.BadMessage, "ReadArchiveFile: bytes must be a length");
  const input = await source.open(request.name, bytes, ARCHIVE_CHUNK_BYTES);
  // The client went away (cancelled, connection lost): stop reading, and stop waiting for it.
  const gone = new AbortController();
  call.once("cancelled", () => gone.abort());
  try {
    for await (const chunk of input) {
      if (gone.signal.aborted) return;
      if (!call.write({ data: chunk as Buffer })) {
        await once(call, "drain", { signal: gone.signal }).catch(() => {});
      }
    }
  } finally {
    input.destroy();
  }
  if (!gone.signal.aborted) call.end();
}
