import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { createGzip } from "node:zlib";
import { FILLER_CHUNK, streamRepeated } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** A body that never ends, as fast as the client reads it. */
export const endlessBodyHost: HttpHostileHost = {
  kind: "http",
  label: "endless-body",
  description: "chunked HTML that never ends: must be cut at the body cap (truncated)",
  entryPaths: ["/"],
  handle(_req, res) {
    res.writeHead(200, { "content-type": "text/html" });
    streamRepeated(res, FILLER_CHUNK, Number.POSITIVE_INFINITY);
  },
};

/** A body of `hugeBodyBytes` with a matching Content-Length, generated chunk by chunk. */
export const hugeBodyHost: HttpHostileHost = {
  kind: "http",
  label: "huge-body",
  description: "a 1 GB body with its Content-Length, streamed: must be cut at the body cap (truncated)",
  entryPaths: ["/"],
  handle(_req, res, context) {
    const size = context.options.hugeBodyBytes;
    res.writeHead(200, { "content-type": "text/html", "content-length": size });
    streamRepeated(res, FILLER_CHUNK, size);
  },
};

/** Decoded bytes per gzip member of the bomb: one member is built once and sent many times. */
const BOMB_MEMBER_DECODED_BYTES = 64 * 1024 * 1024;

/**
 * One gzip member holding 64 MiB of zeros (~64 KiB compressed), compressed from a 1 MiB buffer written
 * 64 times, so the 64 MiB never exist in memory. Concatenated members form one valid gzip stream.
 */
async function buildBombMember(): Promise<Buffer> {
  const zeros = Buffer.alloc(1024 * 1024);
  const gzip = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gzip.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = once(gzip, "end");
  for (let written = 0; written < BOMB_MEMBER_DECODED_BYTES; written += zeros.length) {
    if (!gzip.write(zeros)) await once(gzip, "drain");
  }
  gzip.end();
  await ended;
  return Buffer.concat(chunks);
}

let bombMember: Promise<Buffer> | undefined;

/** Sends `count` copies of `member` with back-pressure. */
function sendMembers(res: ServerResponse, member: Buffer, count: number): void {
  let left = count;
  const pump = (): void => {
    while (!res.destroyed && left > 0) {
      left--;
      if (left === 0) {
        res.end(member);
        return;
      }
      if (!res.write(member)) {
        res.once("drain", pump);
        return;
      }
    }
  };
  pump();
}

/** A small gzip body that decodes to gigabytes of zeros. */
export const gzipBombHost: HttpHostileHost = {
  kind: "http",
  label: "gzip-bomb",
  description: "~4 MB of gzip decoding to 4 GB: the decoder must stop at the body cap (truncated)",
  entryPaths: ["/"],
  handle(_req, res, context) {
    bombMember ??= buildBombMember();
    const members = Math.ceil(context.options.bombDecodedBytes / BOMB_MEMBER_DECODED_BYTES);
    bombMember.then(
      (member) => {
        if (res.destroyed) return;
        res.writeHead(200, {
          "content-type": "text/html",
          "content-encoding": "gzip",
          "content-length": member.length * members,
        });
        sendMembers(res, member, members);
      },
      () => res.destroy(),
    );
  },
};
