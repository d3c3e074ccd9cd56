import { watchAbort } from "../abort-watch.js";

/**
 * Waits in `lines`' line for `key` until the line's owner calls the waiter it pushed there (in the
 * owner's order: first in, first woken, for a queue it shifts); `signal` aborting takes the waiter out
 * of the line and rejects with its reason.
 */
export function waitInLine<K>(lines: Map<K, Array<() => void>>, key: K, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const line = lines.get(key) ?? [];
    lines.set(key, line);
    const unwatch =
      signal &&
      watchAbort(signal, () => {
        const index = line.indexOf(wake);
        if (index >= 0) line.splice(index, 1);
        reject(signal.reason);
      });
    const wake = () => {
      unwatch?.();
      resolve();
    };
    line.push(wake);
  });
}
