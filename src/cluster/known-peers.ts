import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../errors.js";
import type { GossipEntry } from "../failure-detector/index.js";
import type { Logger } from "../logging/index.js";
import { writeFileDurably } from "../storage/data-dir.js";
import { parseHostPort } from "../transport/index.js";

/**
 * The agents this one has seen alive, kept in its data dir so that a restart can rejoin through any of
 * them when the agents its `--join` names are down (as Serf's snapshot and Cassandra's saved peers do):
 * without it, every agent of a deployment that joins through agent 0 restart-loops while agent 0 is down.
 */

/** The file of a data dir that lists the agents seen alive ({@link KnownPeers}). */
export const KNOWN_PEERS_FILE = "peers.json";
/** Agents the file lists at most: the most recently seen alive. */
export const MAX_KNOWN_PEERS = 64;

/** An agent seen alive: where it was reached, and when it was last seen so. */
export interface KnownPeer {
  readonly id: string;
  readonly address: string;
  /** ISO time it was last seen alive. */
  readonly lastSeenAlive: string;
}

/**
 * The peers recorded in `dataDir`, most recently seen first; none when the file is missing. A damaged
 * file (a hand edit, a disk fault) is only a hint lost: it is reported and read as empty.
 */
export async function readKnownPeers(dataDir: string, logger: Logger): Promise<KnownPeer[]> {
  const path = join(dataDir, KNOWN_PEERS_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    logger.warn({ event: "known-peers-unreadable", path }, `cannot read ${path}: ${errorMessage(error)}`);
    return [];
  }
  try {
    const parsed = JSON.parse(text) as { peers?: unknown };
    if (!Array.isArray(parsed.peers)) throw new Error("no peers list");
    return parsed.peers.filter(isKnownPeer).slice(0, MAX_KNOWN_PEERS);
  } catch (error) {
    logger.warn(
      { event: "known-peers-damaged", path },
      `${path} is damaged (${errorMessage(error)}): rejoining only through --join; it is rewritten once agents are seen`,
    );
    return [];
  }
}

function isKnownPeer(value: unknown): value is KnownPeer {
  const { id, address, lastSeenAlive } = (value ?? {}) as Record<string, unknown>;
  return (
    typeof id === "string" &&
    id !== "" &&
    typeof address === "string" &&
    parseHostPort(address) !== undefined &&
    typeof lastSeenAlive === "string" &&
    !Number.isNaN(Date.parse(lastSeenAlive))
  );
}

/** What {@link KnownPeers} needs. */
export interface KnownPeersDeps {
  readonly dataDir: string;
  /** This agent's id: never listed. */
  readonly selfId: string;
  /** The peers the file listed at start (see {@link readKnownPeers}). */
  readonly initial: readonly KnownPeer[];
  /** Wall-clock ms now. */
  readonly now: () => number;
  readonly logger: Logger;
  /** Writes the file whole or not at all. @default {@link writeFileDurably} */
  readonly write?: (path: string, text: string) => Promise<void>;
}

/**
 * Keeps {@link KNOWN_PEERS_FILE} in step with the membership view: an agent seen alive is added (or
 * moved to the front, with its latest address), one that left for good is dropped, a crashed one is
 * kept (it may be back first). Written only when the list of ids and addresses changes, one write at
 * a time, the last view winning; a write that fails (a full disk) is reported and tried at the next
 * change, never stopping the agent.
 */
export class KnownPeers {
  private peers: KnownPeer[];
  private written: string;
  private writing: Promise<void> | undefined;
  private again = false;
  private warned = false;

  constructor(private readonly deps: KnownPeersDeps) {
    this.peers = deps.initial.filter((peer) => peer.id !== deps.selfId);
    this.written = signature(this.peers);
  }

  /** The peers listed now, most recently seen alive first. */
  get list(): readonly KnownPeer[] {
    return this.peers;
  }

  /** Takes in the membership view (every member, with its status). */
  note(members: readonly GossipEntry[]): void {
    const nowIso = new Date(this.deps.now()).toISOString();
    const byId = new Map(this.peers.map((peer) => [peer.id, peer]));
    const seen: KnownPeer[] = [];
    for (const member of members) {
      if (member.id === this.deps.selfId) continue;
      if (member.status === "left") byId.delete(member.id);
      else if (member.status === "alive") {
        byId.delete(member.id);
        seen.push({ id: member.id, address: member.address, lastSeenAlive: nowIso });
      }
    }
    this.peers = [...seen, ...byId.values()].slice(0, MAX_KNOWN_PEERS);
    if (signature(this.peers) !== this.written) this.save();
  }

  /** Resolves once the last change is written (or its write failed). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private save(): void {
    if (this.writing) {
      this.again = true;
      return;
    }
    const peers = this.peers;
    const path = join(this.deps.dataDir, KNOWN_PEERS_FILE);
    const write = this.deps.write ?? writeFileDurably;
    this.writing = write(path, `${JSON.stringify({ peers }, null, 2)}\n`)
      .then(
        () => {
          this.written = signature(peers);
          this.warned = false;
        },
        (error: unknown) => {
          if (this.warned) return;
          this.warned = true;
          this.deps.logger.warn(
            { event: "known-peers-not-written", path },
            `cannot write ${path}: ${errorMessage(error)}; a restart may not find the cluster if its --join agents are down`,
          );
        },
      )
      .finally(() => {
        this.writing = undefined;
        if (this.again) {
          this.again = false;
          if (signature(this.peers) !== this.written) this.save();
        }
      });
  }
}

/** What the file says that matters for a rejoin: ids and addresses, in order. */
function signature(peers: readonly KnownPeer[]): string {
  return peers.map((peer) => `${peer.id}@${peer.address}`).join(" ");
}
