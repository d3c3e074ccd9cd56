/**
 * The pages of one host visit that were fetched and are not durable yet: each is archived, logged and
 * committed in the background while the host's next fetch goes ahead, so a host's pages are not chained
 * behind the disk's syncs. At most `limit` of them at once, the page being fetched counted: a crash
 * fetches at most that many pages of a host again.
 *
 * A page that failed to be archived or committed puts its own URL back; the failure reaches the visit at
 * its next {@link UnsyncedPages.waitForRoom} or {@link UnsyncedPages.drain}.
 */
export class UnsyncedPages {
  private readonly pending = new Set<Promise<void>>();
  private failure: { readonly error: unknown } | undefined;

  /** @param limit pages fetched and not durable at most, the one about to be fetched included (≥ 1) */
  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`limit must be an integer ≥ 1, got ${limit}`);
  }

  /** Pages whose archiving and commit are still running. */
  get size(): number {
    return this.pending.size;
  }

  /** Tracks one page's archiving and commit, started right after its fetch. */
  add(finishing: Promise<void>): void {
    const tracked: Promise<void> = finishing.then(
      () => {
        this.pending.delete(tracked);
      },
      (error: unknown) => {
        this.pending.delete(tracked);
        this.failure ??= { error };
      },
    );
    this.pending.add(tracked);
  }

  /**
   * Resolves once one more page may be fetched (fewer than `limit − 1` still finishing); rejects with
   * the first failure of a page before it.
   */
  async waitForRoom(): Promise<void> {
    while (this.pending.size >= this.limit) await Promise.race(this.pending);
    this.throwIfFailed();
  }

  /** Resolves once every page is durable; rejects with the first failure among them. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    const failure = this.failure;
    if (failure === undefined) return;
    this.failure = undefined;
    throw failure.error;
  }
}
