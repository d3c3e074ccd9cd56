import { spawn } from "node:child_process";
import { access } from "node:fs/promises";
import type { Logger } from "../logging/index.js";
import type { ClosedWarcFile, StateOp } from "../storage/index.js";

/**
 * `--on-warc-closed CMD`: the operator's command, run by `/bin/sh -c` once per finished WARC file and
 * its index, so closed files can leave the crawling machine's disk (moved to another volume, uploaded).
 * It gets the file's path as `$UBICRAWL_WARC_FILE` and its index's as `$UBICRAWL_CDXJ_FILE`, and runs
 * in the agent's working folder, one at a time, in the order the files close. When it exits 0 and the
 * file is gone from its path, the state records it as moved (`warcFileOffloadedOp`), so the agent's
 * check of its WARC files at start does not take its absence for a loss; a file left in place (a hook
 * that copies) is offered again at the next start. A failure is logged (`warc-offload-failed`) and the
 * file stays. A crash between a hook's move and that record makes the next start fetch the file's
 * pages again: a second copy, never a loss.
 */

/** Dependencies of a {@link WarcOffload}. */
export interface WarcOffloadDeps {
  readonly logger: Logger;
  /** Queues a state op and resolves once it is durable (the agent's group commit). */
  readonly record: (op: StateOp) => Promise<void>;
  /** The op recording a file as moved. */
  readonly offloadedOp: (name: string) => StateOp;
}

/** Runs the hook for each closed file, one at a time, once {@link start}ed. */
export class WarcOffload {
  private queue: Promise<void>;
  private readonly offered = new Set<string>();
  private release: () => void = () => {};

  constructor(
    private readonly command: string,
    private readonly deps: WarcOffloadDeps,
  ) {
    this.queue = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  /**
   * Lets the hooks run: only once the agent has checked its WARC files against its state, so a file
   * found at open and moved meanwhile is not taken for a lost one.
   */
  start(): void {
    this.release();
  }

  /** Queues the hook for `file` (once per file per run). */
  closed(file: ClosedWarcFile): void {
    if (this.offered.has(file.path)) return;
    this.offered.add(file.path);
    this.queue = this.queue.then(() => this.offload(file));
  }

  /** Resolves once every hook queued so far has run (none run before {@link start}). */
  drained(): Promise<void> {
    this.start();
    return this.queue;
  }

  private async offload(file: ClosedWarcFile): Promise<void> {
    const { code, stderr } = await this.run(file);
    if (code !== 0) {
      this.deps.logger.warn(
        { event: "warc-offload-failed", file: file.name, exitCode: code, stderr: stderr.slice(-1000) },
        `--on-warc-closed failed for ${file.name} (exit ${code}): the file stays, and is offered again at the next start`,
      );
      return;
    }
    if (await exists(file.path)) return;
    await this.deps.record(this.deps.offloadedOp(file.name));
    this.deps.logger.info(
      { event: "warc-offloaded", file: file.name },
      `${file.name} moved by --on-warc-closed`,
    );
  }

  /** Runs the command for `file`; its exit code (-1 when it could not start) and the end of its stderr. */
  private run(file: ClosedWarcFile): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn("/bin/sh", ["-c", this.command], {
        env: { ...process.env, UBICRAWL_WARC_FILE: file.path, UBICRAWL_CDXJ_FILE: file.indexPath },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-4000);
      });
      child.once("error", (error) => resolve({ code: -1, stderr: String(error) }));
      child.once("close", (code) => resolve({ code: code ?? -1, stderr }));
    });
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
