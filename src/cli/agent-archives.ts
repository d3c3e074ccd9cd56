import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import { AGENT_ID_FILE } from "../storage/data-dir.js";
import { ArchiveClient, PeerClient, type TransportSecurity } from "../transport/index.js";
import { explainCallFailure } from "./operator-connection.js";

/**
 * `ubicrawl export --agent`: the WARC files and indexes of live agents, downloaded over their `Admin`
 * service into a work folder laid out as data dirs (`<id>/agent-id`, `<id>/warc/…`), which the export
 * then packages as it does copied ones. Each file streams to disk: memory holds a chunk or two.
 */

/** What {@link downloadAgentArchives} fetched. */
export interface DownloadedArchives {
  /** One data-dir-like folder per agent. */
  readonly dirs: string[];
  /** What was not fetched, and why (an agent not alive, a file moved off meanwhile). */
  readonly notes: string[];
}

/** Longest wait for the next chunk of a file before its download is given up, in ms. */
const DOWNLOAD_IDLE_MS = 60_000;

/**
 * Downloads the archive of the agent at `agent` (and with `cluster`, of every member alive in its
 * view) into a new folder under `workDir`.
 */
export async function downloadAgentArchives(options: {
  readonly agent: string;
  readonly cluster: boolean;
  readonly security: TransportSecurity;
  readonly timeoutMs: number;
  readonly workDir: string;
}): Promise<DownloadedArchives> {
  const notes: string[] = [];
  const addresses = options.cluster ? await liveMembers(options, notes) : [options.agent];
  const dirs: string[] = [];
  for (const address of addresses) {
    const client = new ArchiveClient(address, { security: options.security, deadlineMs: options.timeoutMs });
    try {
      const listing = await client
        .list()
        .catch(async (error: unknown) =>
          Promise.reject(await explainCallFailure(error, address, options.security)),
        );
      const dir = join(options.workDir, `${listing.agentId}-${randomBytes(3).toString("hex")}`);
      await mkdir(join(dir, "warc"), { recursive: true });
      await writeFile(join(dir, AGENT_ID_FILE), `${listing.agentId}\n`);
      for (const file of listing.files) {
        const wanted = [{ name: file.name, bytes: file.bytes }];
        if (file.indexBytes > 0) wanted.push({ name: `${file.name}.cdxj`, bytes: file.indexBytes });
        for (const { name, bytes } of wanted) {
          try {
            const written = await client.download(name, bytes, join(dir, "warc", name), DOWNLOAD_IDLE_MS);
            if (written !== bytes) {
              throw new UbiError(
                ErrorCode.StorageFailed,
                `${name} of ${listing.agentId} came short (${written} of ${bytes} bytes)`,
              );
            }
          } catch (error) {
            // Moved off by the agent's offload hook since it was listed: not the agent's to give now.
            if (!isUbiError(error, ErrorCode.BadMessage)) throw error;
            notes.push(`${name} of ${listing.agentId}: ${(error as Error).message}`);
          }
        }
        if (file.live)
          notes.push(`${file.name} of ${listing.agentId} is live: packaged as of ${file.bytes} bytes`);
      }
      dirs.push(dir);
    } finally {
      client.close();
    }
  }
  return { dirs, notes };
}

/** The addresses of the members `agent` sees alive (itself first); the others are noted. */
async function liveMembers(
  options: { readonly agent: string; readonly security: TransportSecurity; readonly timeoutMs: number },
  notes: string[],
): Promise<string[]> {
  const client = new PeerClient(options.agent, {
    security: options.security,
    requestDeadlineMs: options.timeoutMs,
  });
  try {
    const reply = await client
      .operatorStats({ cluster: true })
      .catch(async (error: unknown) =>
        Promise.reject(await explainCallFailure(error, options.agent, options.security)),
      );
    const addresses: string[] = [];
    for (const stats of reply.agents) {
      if (stats.status === "ALIVE" && stats.reportedMsAgo === 0) addresses.push(stats.address);
      else
        notes.push(
          `agent ${stats.id} at ${stats.address} is not alive (${stats.status.toLowerCase()}): its files are not fetched; export its data dir`,
        );
    }
    return addresses;
  } finally {
    client.close();
  }
}
