import {
  isMainThread,
  type MessagePort,
  parentPort,
  type ResourceLimits,
  Worker,
  workerData,
} from "node:worker_threads";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import { type CommandIo, PROCESS_IO } from "./command-io.js";

/**
 * A batch subcommand run in a worker thread with a capped young generation: V8 grows a busy isolate's
 * young generation to tens of MB (Node 26 further than Node 20), and a command that streams a collection
 * through small buffers (`export`) churns through it, so its peak memory followed V8's sizing rather than
 * the command's own (an export of 42,000 pages: 230–260 MB on Node 26, 165–175 MB in a worker with
 * {@link WORKER_LIMITS}; 160–165 MB against 160–170 MB on Node 20).
 * The command prints on a {@link CommandIo} whose text is posted to the main thread and written there on
 * the caller's; what it throws comes back as the same `UbiError` (code and message), so the caller
 * handles it as if the command had run in place.
 */

/** A command as a worker runs it: arguments and where to print in, exit code out. */
type WorkerCommand = (argv: string[], io: CommandIo) => Promise<number>;

/**
 * What the worker is given: the command's module (a URL), the name it exports, its arguments, and
 * whether the caller's outputs are terminals.
 */
interface WorkerTask {
  readonly module: string;
  readonly name: string;
  readonly argv: readonly string[];
  readonly tty: { readonly stdout: boolean; readonly stderr: boolean };
}

/** Text the command printed, posted before its answer (in the order printed). */
interface WorkerText {
  readonly stream: "stdout" | "stderr";
  readonly text: string;
}

/** What the worker answers: the command's exit code, or what it threw. */
type WorkerAnswer =
  | { readonly code: number }
  | { readonly error: { readonly message: string; readonly ubiCode?: ErrorCode; readonly stack?: string } };

/**
 * A command worker's heap: a young generation of 6 MB, and an old one of at most 1 GB. Any old-generation
 * cap up to 1 GB also makes V8 grow that generation by need rather than by its process-wide limit (an
 * export of 42,000 pages, whose live heap is ~20 MB: 165–175 MB on Node 26 with it, 216 MB with a 2 GB
 * cap); what a command holds grows with its files and seeds, not its pages, so 1 GB is far from reach.
 */
export const WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 1024 };

/**
 * Runs `name`, exported by `module` (a command: arguments and where to print in, exit code out), in a
 * worker thread with `limits`, printing on `io`; resolves to its exit code, rejects with what it threw.
 */
export function runCommandInWorker(
  module: URL,
  name: string,
  argv: readonly string[],
  io: CommandIo = PROCESS_IO,
  limits: ResourceLimits = WORKER_LIMITS,
): Promise<number> {
  const tty = { stdout: io.stdout.isTTY === true, stderr: io.stderr.isTTY === true };
  const task: WorkerTask = { module: module.href, name, argv, tty };
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: task, resourceLimits: limits });
    let answer: WorkerAnswer | undefined;
    worker.on("message", (message: WorkerText | WorkerAnswer) => {
      if ("stream" in message) io[message.stream].write(message.text);
      else answer = message;
    });
    worker.once("error", (error: Error & { code?: string }) => {
      if (error.code !== "ERR_WORKER_OUT_OF_MEMORY") reject(error);
      else
        reject(
          new UbiError(
            ErrorCode.Overloaded,
            `ran out of memory: the command's heap is limited to ${limits.maxOldGenerationSizeMb} MB`,
          ),
        );
    });
    worker.once("exit", (exitCode) => {
      if (answer === undefined)
        reject(new Error(`the ${name} worker ended (exit code ${exitCode}) without an answer`));
      else if ("code" in answer) resolve(answer.code);
      else reject(errorFrom(answer.error));
    });
  });
}

/** The error a worker's command threw, made again on this side. */
function errorFrom(thrown: Extract<WorkerAnswer, { error: unknown }>["error"]): Error {
  const error =
    thrown.ubiCode === undefined ? new Error(thrown.message) : new UbiError(thrown.ubiCode, thrown.message);
  if (thrown.stack !== undefined) error.stack = thrown.stack;
  return error;
}

/** In the worker: where the command prints, posted to the main thread. */
function postingIo(port: MessagePort, tty: WorkerTask["tty"]): CommandIo {
  const output = (stream: WorkerText["stream"]) => ({
    write: (text: string) => port.postMessage({ stream, text } satisfies WorkerText),
    isTTY: tty[stream],
  });
  return { stdout: output("stdout"), stderr: output("stderr") };
}

/** In the worker: runs the task and answers. */
async function runTask(task: WorkerTask, port: MessagePort): Promise<void> {
  let answer: WorkerAnswer;
  try {
    const loaded = (await import(task.module)) as Record<string, WorkerCommand>;
    const command = loaded[task.name];
    if (command === undefined) throw new Error(`${task.module} exports no ${task.name}`);
    answer = { code: await command([...task.argv], postingIo(port, task.tty)) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const stack = error instanceof Error ? error.stack : undefined;
    answer = {
      error: {
        message,
        ...(isUbiError(error) ? { ubiCode: error.code } : {}),
        ...(stack === undefined ? {} : { stack }),
      },
    };
  }
  port.postMessage(answer);
}

if (
  !isMainThread &&
  parentPort !== null &&
  (workerData as Partial<WorkerTask> | undefined)?.module !== undefined
) {
  await runTask(workerData as WorkerTask, parentPort);
}
