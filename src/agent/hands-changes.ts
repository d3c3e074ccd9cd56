import { eitherAborted, watchAbort } from "../abort-watch.js";

/** A wait's end when its host is no longer this agent's to fetch; `dispose` once the wait is over. */
export interface HandedOverWatch {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Tells the waits of URLs taken from their queues that who may fetch which host changed (a view change,
 * a host's crawl passed to another agent), so that a URL whose host is no longer this agent's to fetch
 * stops waiting for its address's slot at once (nothing was sent for it), goes back to its queue and on
 * to the host's owner. That wait may last seconds at a busy shared address, and the hand-over of the
 * host waited for it. (A wait for robots.txt is not ended: its request, shared by the origin's URLs,
 * may go out later, and the host's new holder must not send it one meanwhile.) One signal for every
 * wait, renewed at each change: a change costs one look per waiting URL.
 */
export class HandsChanges {
  #change = new AbortController();

  /** Who may fetch which host changed: each wait looks whether its host is still this agent's. */
  changed(): void {
    const change = this.#change;
    this.#change = new AbortController();
    change.abort();
  }

  /**
   * A signal aborted as soon as `mayFetch()` is false: now, or at a later {@link changed}.
   */
  watch(mayFetch: () => boolean): HandedOverWatch {
    const handedOver = new AbortController();
    let unwatch = () => {};
    const look = () => {
      if (!mayFetch()) {
        handedOver.abort();
        return;
      }
      unwatch = watchAbort(this.#change.signal, look);
    };
    look();
    return { signal: handedOver.signal, dispose: () => unwatch() };
  }
}

/**
 * A signal aborted when `paused` is or `handedOver`'s is (either may be absent: then no signal when both
 * are); `dispose` once the wait it ends is over.
 */
export function pausedOrHandedOver(
  paused: AbortSignal | undefined,
  handedOver: HandedOverWatch | undefined,
): { readonly signal: AbortSignal | undefined; dispose(): void } {
  if (handedOver === undefined) return { signal: paused, dispose: () => {} };
  if (paused === undefined) return handedOver;
  const either = eitherAborted(paused, handedOver.signal);
  return {
    signal: either.signal,
    dispose: () => {
      either.dispose();
      handedOver.dispose();
    },
  };
}
