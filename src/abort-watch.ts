/**
 * Callbacks on an abort signal that many waiters share (the agent's stop signal: every page waiting
 * for its turn, every fetch in flight), kept in one `Set` behind one listener per signal while any
 * waits. Adding and removing one costs O(1), where an `EventTarget` walks its whole list of listeners
 * to remove one: with hundreds of pages waiting, `removeEventListener` alone took ~2% of a busy agent's
 * CPU.
 */

/** The callbacks waiting on a signal, and its one listener. */
interface Watchers {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

/** The watchers of each signal that has some and has not fired yet. */
const watched = new WeakMap<AbortSignal, Watchers>();

/**
 * Calls `callback` once when `signal` aborts, unless the returned function was called first (calling
 * it again does nothing). A signal aborted already calls nothing: check `signal.aborted` before. Each
 * call needs a callback of its own (one added twice is kept once). The signal's listener goes with its
 * last watcher.
 */
export function watchAbort(signal: AbortSignal, callback: () => void): () => void {
  let watchers = watched.get(signal);
  if (watchers === undefined) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      watched.delete(signal);
      for (const waiting of callbacks) waiting();
      callbacks.clear();
    };
    watchers = { callbacks, listener };
    watched.set(signal, watchers);
    signal.addEventListener("abort", listener, { once: true });
  }
  const { callbacks, listener } = watchers;
  callbacks.add(callback);
  return () => {
    if (!callbacks.delete(callback) || callbacks.size > 0 || watched.get(signal)?.callbacks !== callbacks)
      return;
    watched.delete(signal);
    signal.removeEventListener("abort", listener);
  };
}

/**
 * A signal aborted as soon as `first` or `second` is (with its reason; at once when one is already);
 * `dispose` stops watching them: call it once the wait it guards is over.
 */
export function eitherAborted(
  first: AbortSignal,
  second: AbortSignal,
): { readonly signal: AbortSignal; dispose(): void } {
  const either = new AbortController();
  const aborted = [first, second].find((signal) => signal.aborted);
  if (aborted !== undefined) {
    either.abort(aborted.reason);
    return { signal: either.signal, dispose: () => {} };
  }
  const unwatchFirst = watchAbort(first, () => either.abort(first.reason));
  const unwatchSecond = watchAbort(second, () => either.abort(second.reason));
  return {
    signal: either.signal,
    dispose: () => {
      unwatchFirst();
      unwatchSecond();
    },
  };
}
