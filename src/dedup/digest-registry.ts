import type { Clock, TimerHandle } from "../clock.js";
import { SeenSet } from "../frontier/index.js";
import type { PayloadOriginal } from "../storage/index.js";

/**
 * Duplicate detection: across the cluster (each digest asked of its owner), within this agent only
 * (no messages; copies fetched by different agents are each stored), or off (every response stored).
 */
export const DEDUP_MODES = ["cluster", "local", "off"] as const;
/** One of {@link DEDUP_MODES}. */
export type DedupMode = (typeof DEDUP_MODES)[number];

/**
 * How long a claim on a digest lasts: the agent that was told `new` has this long to store the
 * response and confirm it. Past it (the claimant crashed, or its disk is full), the next agent that
 * asks becomes the claimant, so a payload is never left unstored.
 */
export const DEFAULT_CLAIM_LEASE_MS = 30_000;
/** Confirmed digests kept in memory besides the store (the oldest is forgotten first). */
export const DEFAULT_RECENT_DIGESTS = 50_000;

/**
 * The answer to "was this payload stored before?": `seen` with the response that stored it; `new`,
 * and the asker is now the digest's claimant, expected to store the response and confirm it; or
 * `pending`, another agent holds the claim and has not confirmed yet: ask again shortly.
 */
export type DigestVerdict =
  | { readonly kind: "seen"; readonly original: PayloadOriginal }
  | { readonly kind: "new" }
  | { readonly kind: "pending" };

/** One question: a payload digest, and the agent asking (its claimant if the digest is new). */
export interface DigestQuestion {
  readonly digest: string;
  readonly asker: string;
  /**
   * The asker's incarnation (its process life, as the failure detector counts them): a claim of an
   * earlier life of the same agent is void. Absent: the current one (this agent's own questions).
   */
  readonly incarnation?: number;
}

/** What a {@link DigestRegistry} needs. */
export interface DigestRegistryDeps {
  readonly clock: Clock;
  /** The durable index: the originals stored for these digests (undefined: none). */
  readonly lookup: (digests: readonly string[]) => Promise<(PayloadOriginal | undefined)[]>;
  /**
   * Records confirmed originals durably, in one commit of the agent's state (which must not wait for
   * the agent's next page: the crawl may be over, and an uncommitted change keeps it from looking idle).
   */
  readonly save: (confirmed: readonly (readonly [digest: string, original: PayloadOriginal])[]) => void;
  /** Calls `visit` with every digest of the durable index (read once, by {@link DigestRegistry.load}). */
  readonly forEachStored?: (visit: (digest: string) => void) => Promise<void>;
  /**
   * Called once per copy: a payload stored again, by a claimant whose lease ran out or an agent that
   * could not ask (stats).
   */
  readonly onCopy?: () => void;
}

/** A claimant's outcome, told to the digest's owner. */
export interface DigestSettlement {
  readonly digest: string;
  /** The stored (synced) response; absent: the claimant could not store it (the claim is released). */
  readonly original?: PayloadOriginal;
}

interface Claim {
  readonly asker: string;
  readonly incarnation: number;
  readonly expiresAtMs: number;
}

/**
 * The digest index of the payload digests this agent owns (digests are spread over the agents by the
 * same consistent hashing as hosts): answers "stored before?" and keeps, for each digest, the response
 * that stored it first. A digest no one stored yet is claimed by the first asker; others asking
 * meanwhile hear `pending` until the claimant confirms (they then write a revisit) or its lease ends
 * (then the next asker claims it). So two agents fetching the same bytes at the same moment store them
 * once, and a claimant that dies cannot leave a revisit pointing at nothing.
 */
export class DigestRegistry {
  private readonly claims = new Map<string, Claim>();
  /** Recently confirmed digests, oldest first (a Map keeps insertion order). */
  private readonly recent = new Map<string, PayloadOriginal>();
  private readonly leaseMs: number;
  private readonly recentLimit: number;
  private sweeper: TimerHandle | undefined;
  /**
   * A 64-bit key of every digest in the durable index (~10 bytes each), once loaded: a digest not in it
   * was never stored, and is answered `new` without reading the store — the common case, a page seen
   * once. A key present (a duplicate, or one in 2^64 a collision) is looked up.
   */
  private stored: SeenSet | undefined;

  constructor(
    options: { readonly claimLeaseMs?: number; readonly recentDigests?: number },
    private readonly deps: DigestRegistryDeps,
  ) {
    this.leaseMs = options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
    this.recentLimit = options.recentDigests ?? DEFAULT_RECENT_DIGESTS;
  }

  /**
   * Reads the keys of every stored digest, so questions about new payloads cost no store read. Until it
   * resolves (or without `forEachStored`), every question is looked up.
   */
  async load(): Promise<void> {
    if (!this.deps.forEachStored) return;
    const stored = new SeenSet();
    await this.deps.forEachStored((digest) => addKey(stored, digest));
    this.stored = stored;
  }

  /** Claims held now (for stats and tests). */
  get claimsHeld(): number {
    return this.claims.size;
  }

  /** Answers each question, in order; a `new` answer makes its asker the digest's claimant. */
  async check(questions: readonly DigestQuestion[]): Promise<DigestVerdict[]> {
    const now = this.deps.clock.now();
    const verdicts: (DigestVerdict | undefined)[] = [];
    // Claimed at once, before the store is read, so a question arriving meanwhile sees the claim.
    const claimedHere: { index: number; digest: string }[] = [];
    for (const [index, { digest, asker, incarnation = 0 }] of questions.entries()) {
      const known = this.recent.get(digest);
      if (known) {
        verdicts.push({ kind: "seen", original: known });
        continue;
      }
      const claim = this.claims.get(digest);
      // Claimed already, be it by the same agent: two of its workers may hold the same bytes at once.
      // A claim of an earlier life of the asker died with it.
      const staleClaim = claim !== undefined && claim.asker === asker && claim.incarnation < incarnation;
      if (claim && claim.expiresAtMs > now && !staleClaim) {
        verdicts.push({ kind: "pending" });
        continue;
      }
      // Unclaimed, or its claim ran out: a claim with a fresh lease.
      this.claims.set(digest, { asker, incarnation, expiresAtMs: now + this.leaseMs });
      claimedHere.push({ index, digest });
      verdicts.push(undefined);
    }
    this.sweepLater();
    const unknown = this.stored;
    if (unknown !== undefined) {
      const maybeStored = claimedHere.filter(({ index, digest }) => {
        if (hasKey(unknown, digest)) return true;
        verdicts[index] = { kind: "new" };
        return false;
      });
      claimedHere.length = 0;
      claimedHere.push(...maybeStored);
    }
    if (claimedHere.length > 0) {
      let stored: (PayloadOriginal | undefined)[];
      try {
        stored = await this.deps.lookup(claimedHere.map(({ digest }) => digest));
      } catch (error) {
        for (const { digest } of claimedHere) this.claims.delete(digest);
        throw error;
      }
      for (const [i, { index, digest }] of claimedHere.entries()) {
        const original = stored[i];
        if (original === undefined) {
          verdicts[index] = { kind: "new" };
        } else {
          this.claims.delete(digest);
          this.remember(digest, original);
          verdicts[index] = { kind: "seen", original };
        }
      }
    }
    return verdicts as DigestVerdict[];
  }

  /**
   * The response with payload `digest` is stored (synced) as `original`: later askers hear `seen`. The
   * first confirmation of a digest wins; a later one is a copy (a claim ran out, or its agent could not
   * ask), counted.
   */
  confirm(digest: string, original: PayloadOriginal): void {
    this.settle(undefined, [{ digest, original }]);
  }

  /** The claimant of `digest` could not store it: the next asker claims it. */
  release(digest: string, asker: string): void {
    if (this.claims.get(digest)?.asker === asker) this.claims.delete(digest);
  }

  /**
   * What `asker` did with digests it was told were new, or stored without asking: each confirmed, or
   * released. The first confirmation of a digest is saved (those of one call together); one of a payload
   * stored already is a copy, counted and not saved.
   */
  settle(asker: string | undefined, settlements: readonly DigestSettlement[]): void {
    const confirmed: [string, PayloadOriginal][] = [];
    for (const { digest, original } of settlements) {
      if (original === undefined) {
        if (asker !== undefined) this.release(digest, asker);
        continue;
      }
      this.claims.delete(digest);
      if (this.isStored(digest)) {
        this.deps.onCopy?.();
        continue;
      }
      this.remember(digest, original);
      if (this.stored !== undefined) addKey(this.stored, digest);
      confirmed.push([digest, original]);
    }
    if (confirmed.length > 0) this.deps.save(confirmed);
  }

  /** Agent `asker` is gone (crashed, left): its claims end now, and the next asker claims. */
  forget(asker: string): void {
    for (const [digest, claim] of this.claims) if (claim.asker === asker) this.claims.delete(digest);
  }

  /** Stops the sweeping of expired claims. */
  stop(): void {
    if (this.sweeper !== undefined) this.deps.clock.clearTimeout(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Whether a response with payload `digest` is stored: confirmed lately, or (once loaded) its key is in
   * the durable index, one in 2^64 a collision.
   */
  private isStored(digest: string): boolean {
    return this.recent.has(digest) || (this.stored !== undefined && hasKey(this.stored, digest));
  }

  private remember(digest: string, original: PayloadOriginal): void {
    this.recent.set(digest, original);
    if (this.recent.size > this.recentLimit) {
      const oldest = this.recent.keys().next().value as string;
      this.recent.delete(oldest);
    }
  }

  /** Forgets expired claims now and then, so claims of agents that died do not pile up. */
  private sweepLater(): void {
    if (this.sweeper !== undefined || this.claims.size === 0) return;
    this.sweeper = this.deps.clock.setTimeout(() => {
      this.sweeper = undefined;
      const now = this.deps.clock.now();
      for (const [digest, claim] of this.claims) if (claim.expiresAtMs <= now) this.claims.delete(digest);
      this.sweepLater();
    }, this.leaseMs);
  }
}

/** Two 32-bit FNV-1a hashes of a digest (uniform already: any mix of its characters will do). */
function keyHalves(digest: string): [hi: number, lo: number] {
  let hi = 0x811c9dc5;
  let lo = 0x050c5d1f;
  for (let i = 0; i < digest.length; i++) {
    const c = digest.charCodeAt(i);
    hi = Math.imul(hi ^ c, 0x01000193);
    lo = Math.imul(lo ^ c, 0x01000193) ^ (hi >>> 15);
  }
  return [hi >>> 0, lo >>> 0];
}

function addKey(set: SeenSet, digest: string): void {
  const [hi, lo] = keyHalves(digest);
  set.addParts(hi, lo);
}

function hasKey(set: SeenSet, digest: string): boolean {
  const [hi, lo] = keyHalves(digest);
  return set.hasParts(hi, lo);
}
