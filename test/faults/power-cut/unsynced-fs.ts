import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, realpath, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const PYTHON = "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("./unsynced_fs.py", import.meta.url));
/** Looking this up under the mount cuts the power (see unsynced_fs.py). */
const CUT_PATH = ".power-cut";
/** Looking this up under the mount makes the next fsync fail (see unsynced_fs.py). */
const FAIL_NEXT_SYNC_PATH = ".fail-next-sync";
/** Looking this up under the mount writes the durable lengths now (see unsynced_fs.py). */
const DUMP_PATH = ".dump-durable";

/**
 * Why power cuts cannot be simulated on this machine (no /dev/fuse, not root, Debian's
 * python3-fusepy missing), or undefined when they can.
 */
export function unsyncedFsUnavailable(): string | undefined {
  if (!existsSync("/dev/fuse")) return "no /dev/fuse";
  if (process.getuid?.() !== 0) return "mounting FUSE file systems needs root here";
  const probe = spawnSync(PYTHON, ["-c", "import fusepy"], { encoding: "utf8" });
  if (probe.status !== 0) return `${PYTHON} cannot import fusepy (Debian's python3-fusepy): ${probe.stderr}`;
  return undefined;
}

/**
 * Whether `cut` dropped bytes of the crawl's own data (WARC files, the crawl log, LevelDB's log), not
 * only of files nothing syncs (LevelDB's info `LOG`): what makes a power-cut test more than a SIGKILL.
 */
export function cutCrawlData(cut: readonly CutFile[]): boolean {
  return cut.some((file) => file.kept < file.size && isCrawlData(file.path));
}

/** WARC files being written, the crawl log, LevelDB's log: the files a commit syncs. */
function isCrawlData(path: string): boolean {
  return /\/(warc\/[^/]+\.open|crawl\.log|state\/\d+\.log)$/.test(path);
}

/**
 * Stops `pid` (SIGSTOP) at a moment when some of the crawl's own data is not durable yet, so that a cut
 * then drops something; resumes it and tries again a few ms later otherwise. Leaves it stopped. The data
 * must still be unsynced a while after the stop: an fsync the process sent just before it sits in the
 * FUSE queue and may be answered later (on a loaded machine, more than 30 ms later), making it durable.
 */
export async function stopWhileUnsynced(
  pid: number,
  mount: UnsyncedMount,
  random: () => number,
): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    process.kill(pid, "SIGSTOP");
    // Requests the process had already sent to the file system are answered meanwhile.
    await delay(30);
    if (await hasUnsyncedCrawlData(mount)) {
      await delay(SETTLE_MS);
      if (await hasUnsyncedCrawlData(mount)) return;
    }
    process.kill(pid, "SIGCONT");
    await delay(2 + Math.floor(random() * 20));
  }
  throw new Error("the agent never had unsynced crawl data when stopped: 500 tries");
}

/** How long stopped data must stay unsynced to count (the FUSE queue drained meanwhile). */
const SETTLE_MS = 150;

async function hasUnsyncedCrawlData(mount: UnsyncedMount): Promise<boolean> {
  return (await mount.unsynced()).some((file) => isCrawlData(file.path));
}

/** One file after a power cut: its size before, what fsync had made durable, and what was kept. */
export interface CutFile {
  readonly path: string;
  readonly size: number;
  readonly durable: number;
  readonly kept: number;
}

/**
 * A folder mounted through `unsynced_fs.py`: writes pass through to `lower`, and {@link powerCut}
 * drops from each file what was written after its last fsync (keeping, at random, part of it, as
 * writeback might have).
 */
export class UnsyncedMount {
  private constructor(
    readonly lower: string,
    readonly mount: string,
    private readonly process: ChildProcess,
    private readonly stateFile: string,
    private readonly output: string[],
  ) {}

  /** Mounts `lower` on `mount` (both existing folders); resolves once the mount is live. */
  static async mount(lower: string, mount: string, stateFile: string): Promise<UnsyncedMount> {
    if (await isMountPoint(mount)) throw new Error(`${mount} is a mount point already`);
    const output: string[] = [];
    const child = spawn(PYTHON, [SCRIPT, lower, mount, stateFile], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const deadline = Date.now() + 10_000;
    while (!(await isMountPoint(mount))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`unsynced_fs.py did not mount ${mount}: ${output.join("")}`);
      }
      await delay(20);
    }
    return new UnsyncedMount(lower, mount, child, stateFile, output);
  }

  /**
   * The power cut: from now on every call under the mount fails (EIO), and each file written since the
   * mount is cut back to its durable length plus `random()` × the rest (none when `random()` < 0.5: the
   * usual case of nothing written back). Processes may still hold files open under the mount.
   */
  async powerCut(random: () => number): Promise<CutFile[]> {
    await stat(join(this.mount, CUT_PATH)).catch(() => undefined);
    const exited = new Promise<void>((resolve) => {
      if (this.process.exitCode !== null || this.process.signalCode !== null) resolve();
      else this.process.once("exit", () => resolve());
    });
    spawnSync("umount", ["-l", this.mount]);
    this.process.kill("SIGKILL");
    await exited;
    const cut: CutFile[] = [];
    for (const file of await this.notDurable()) {
      const draw = random();
      const kept =
        draw < 0.5
          ? file.durable
          : file.durable + Math.floor(((draw - 0.5) / 0.5) * (file.size - file.durable));
      await truncate(join(this.lower, file.path), kept);
      cut.push({ ...file, kept });
    }
    return cut;
  }

  /** Files written since the mount with bytes no fsync has made durable yet (`kept` = their size). */
  async unsynced(): Promise<CutFile[]> {
    await stat(join(this.mount, DUMP_PATH)).catch(() => undefined);
    return this.notDurable();
  }

  private async notDurable(): Promise<CutFile[]> {
    const durable = JSON.parse(await readFile(this.stateFile, "utf8")) as Record<string, number>;
    const files: CutFile[] = [];
    for (const [path, durableBytes] of Object.entries(durable).sort()) {
      const size = await stat(join(this.lower, path)).then(
        (s) => s.size,
        () => undefined,
      );
      if (size !== undefined && size > durableBytes)
        files.push({ path, size, durable: durableBytes, kept: size });
    }
    return files;
  }

  /** The next fsync under the mount fails with EIO, making nothing durable (a disk error). */
  async failNextSync(): Promise<void> {
    await stat(join(this.mount, FAIL_NEXT_SYNC_PATH)).catch(() => undefined);
  }

  /** What the file system printed (for failure messages). */
  get log(): string {
    return this.output.join("");
  }

  /** Unmounts without a cut, if still mounted (for clean-up after a failed test). */
  async release(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    spawnSync("umount", ["-l", this.mount]);
    this.process.kill("SIGKILL");
  }
}

async function isMountPoint(path: string): Promise<boolean> {
  const target = await realpath(path);
  const mounts = await readFile("/proc/self/mounts", "utf8");
  // Spaces and other special characters appear octal-escaped there (`\040`).
  const decodeOctal = (field: string) =>
    field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  return mounts.split("\n").some((line) => decodeOctal(line.split(" ")[1] ?? "") === target);
}
