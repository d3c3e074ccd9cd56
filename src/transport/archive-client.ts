import { createWriteStream } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Client, Metadata } from "@grpc/grpc-js";
import { ErrorCode, UbiError } from "../errors.js";
import { parseHostPort } from "./address.js";
import type { ArchiveFileInfo, ArchiveListing } from "./archive-service.js";
import { serviceDefinition } from "./protocol.js";
import { channelSecurityFor, INSECURE, type TransportSecurity } from "./security.js";
import { errorFromStatus } from "./status-mapping.js";

/**
 * An operator's client of an agent's archive (`Admin` service: `ListArchive`, `ReadArchiveFile`):
 * lists its WARC files and downloads them to disk as they stream, so memory holds a chunk or two
 * whatever the file's size (gRPC's flow control holds the sender back while the disk is slower).
 */
export class ArchiveClient {
  /** The agent's `host:port`. */
  readonly address: string;
  readonly #client: Client;
  readonly #deadlineMs: number;

  /** `deadlineMs` bounds the listing; a download's bound is its `idleMs` between chunks. */
  constructor(address: string, options: { security?: TransportSecurity; deadlineMs: number }) {
    const hostPort = parseHostPort(address);
    if (hostPort === undefined) {
      throw new UbiError(ErrorCode.InvalidArgument, `agent address must be host:port, got ${address}`);
    }
    this.address = address;
    this.#deadlineMs = options.deadlineMs;
    const { credentials, options: channel } = channelSecurityFor(options.security ?? INSECURE, hostPort.host);
    this.#client = new Client(address, credentials, { ...channel, "grpc.enable_channelz": 0 });
  }

  /** The agent's id and WARC files. */
  list(): Promise<ArchiveListing> {
    const method = method$("ListArchive");
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        {},
        new Metadata(),
        { deadline: Date.now() + this.#deadlineMs },
        (error, value) => {
          if (error) reject(errorFromStatus(error, this.address, "ListArchive"));
          else {
            try {
              resolve(validateListing(value));
            } catch (invalid) {
              reject(invalid);
            }
          }
        },
      );
    });
  }

  /**
   * Writes the first `bytes` (0: all) of file `name` of the listing to `path`; resolves to the bytes
   * written. Rejects (and the file is partial) when the agent fails, goes away or sends nothing for
   * `idleMs`.
   */
  async download(name: string, bytes: number, path: string, idleMs: number): Promise<number> {
    const method = method$("ReadArchiveFile");
    const call = this.#client.makeServerStreamRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      { name, bytes },
      new Metadata(),
      {},
    );
    let written = 0;
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => call.cancel(), idleMs);
    };
    arm();
    const chunks = new Transform({
      readableObjectMode: false,
      writableObjectMode: true,
      transform(message: { data?: unknown }, _encoding, done) {
        arm();
        if (!Buffer.isBuffer(message.data)) {
          done(new UbiError(ErrorCode.BadMessage, "ReadArchiveFile: a chunk without data"));
          return;
        }
        written += message.data.length;
        done(null, message.data);
      },
    });
    try {
      await pipeline(call, chunks, createWriteStream(path));
    } catch (error) {
      const grpc = error as { code?: number; details?: string };
      throw typeof grpc.code === "number" && !(error instanceof UbiError)
        ? errorFromStatus(
            error as Parameters<typeof errorFromStatus>[0],
            this.address,
            `ReadArchiveFile ${name}`,
          )
        : error;
    } finally {
      clearTimeout(idle);
    }
    return written;
  }

  /** Closes the connection. */
  close(): void {
    this.#client.close();
  }
}

function method$(name: "ListArchive" | "ReadArchiveFile") {
  const method = serviceDefinition("Admin")[name];
  if (method === undefined) throw new Error(`proto has no method ${name}`);
  return method;
}

/** The listing an agent sent, checked: names of WARC files only, lengths as numbers. */
function validateListing(value: unknown): ArchiveListing {
  const listing = value as { agentId?: unknown; files?: unknown };
  const bad = (why: string) => new UbiError(ErrorCode.BadMessage, `ListArchive reply: ${why}`);
  if (typeof listing?.agentId !== "string" || !Array.isArray(listing.files))
    throw bad("no agent id or files");
  const files: ArchiveFileInfo[] = listing.files.map((file: Record<string, unknown>) => {
    const { name, bytes, indexBytes, live } = file;
    if (typeof name !== "string" || !/^[A-Za-z0-9._-]+\.warc\.(gz|zst)$/.test(name)) {
      throw bad(`not a WARC file name: ${String(name)}`);
    }
    if (![bytes, indexBytes].every((n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0)) {
      throw bad(`bad lengths for ${name}`);
    }
    return { name, bytes: bytes as number, indexBytes: indexBytes as number, live: live === true };
  });
  return { agentId: listing.agentId, files };
}
