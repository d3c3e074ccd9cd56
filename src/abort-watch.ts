/**
 * Callbacks on an abort signal that many waiters share (the agent's stop signal: every page waiting
 * for its turn, every fetch in flight), kept in one `Set` behind one listener per signal. Adding and
 * removing one costs O(1), where an `EventTarget` walks its whole list of listeners to remove one: with
 * hundreds of pages waiting, `removeEventListener` alone took ~2% of a busy agent's CPU.
 */

/** The callbacks waiting on each signal that has not fired yet. */
const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts, unless the returned function was called first (calling
 * it again does nothing). A signal aborted already calls nothing: check `signal.aborted` before. Each
 * call needs a callback of its own (one added twice is kept once).
 */
export function watchAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = watchers.get(signal);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    callbacks = created;
    watchers.set(signal, created);
    signal.addEventListener(
      "abort",
      () => {
        watchers.delete(signal);
        for (const waiting of created) waiting();
        created.clear();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(callback);
  return () => {
    set.delete(callback);
  };
}
