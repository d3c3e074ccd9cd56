import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, stat, truncate } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const PYTHON = "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("./unsynced_fs.py", import.meta.url));
/** Looking this up under the mount cuts the power (see unsynced_fs.py). */
const CUT_PATH = ".power-cut";

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
    const durable = JSON.parse(await readFile(this.stateFile, "utf8")) as Record<string, number>;
    const cut: CutFile[] = [];
    for (const [path, durableBytes] of Object.entries(durable).sort()) {
      const file = join(this.lower, path);
      const size = await stat(file).then(
        (s) => s.size,
        () => undefined,
      );
      if (size === undefined || size <= durableBytes) continue;
      const draw = random();
      const kept =
        draw < 0.5 ? durableBytes : durableBytes + Math.floor(((draw - 0.5) / 0.5) * (size - durableBytes));
      await truncate(file, kept);
      cut.push({ path, size, durable: durableBytes, kept });
    }
    return cut;
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
  const mounts = await readFile("/proc/self/mounts", "utf8");
  return mounts.split("\n").some((line) => line.split(" ")[1] === path);
}
