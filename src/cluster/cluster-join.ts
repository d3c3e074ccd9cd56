import { type Clock, sleep } from "../clock.js";
import { ErrorCode, isUbiError, UbiError } from "../errors.js";
import type { FailureDetector } from "../failure-detector/index.js";
import type { Logger } from "../logging/index.js";

/** @default of how long joining keeps trying the seed addresses. */
export const DEFAULT_JOIN_TIMEOUT_MS = 30_000;
/** Wait between two rounds of join attempts. */
const JOIN_RETRY_MS = 500;
/** How often {@link waitForSeeds} says it is still trying. */
export const JOIN_PROGRESS_INTERVAL_MS = 5000;

/** How {@link joinCluster} joins. */
export interface JoinPlan {
  /** Addresses of live agents to join through (empty: this agent starts a new cluster). */
  readonly seeds: readonly string[];
  /** How long to keep trying the seeds before giving up. */
  readonly joinTimeoutMs: number;
  /** How long to wait at most for every member learned by gossip to answer directly. */
  readonly settleMs: number;
  /** How often to look whether they have. */
  readonly pollMs: number;
  /**
   * How long an id conflict is retried: an agent restarted on another address (a new port) is refused
   * while the others still take its earlier life for alive, until they suspect it.
   */
  readonly idConflictWaitMs: number;
  /** Where it says that it waits. */
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * Joins the cluster through `plan.seeds` (retrying until the join timeout; an id conflict only for
 * `idConflictWaitMs`, as it is the earlier life of a restarted agent until the others suspect it; a
 * seed's refusal of what it sends, such as another partitioning, not at all),
 * starts the failure detector and waits until every member learned by gossip has answered directly,
 * so the first links this agent routes already use the whole cluster's view. Returns true when it
 * joined other agents, false when it starts a cluster of its own.
 */
export async function joinCluster(detector: FailureDetector, plan: JoinPlan): Promise<boolean> {
  const { clock, seeds } = plan;
  if (seeds.length > 0) {
    const startedAtMs = clock.now();
    const deadline = startedAtMs + plan.joinTimeoutMs;
    let toldOfConflict = false;
    for (;;) {
      try {
        await detector.join(seeds);
        break;
      } catch (error) {
        const conflict = isUbiError(error, ErrorCode.IdConflict);
        // A seed that refuses what this agent sends (another --partition…) will refuse it again.
        if (isUbiError(error, ErrorCode.BadMessage)) throw error;
        if (clock.now() >= deadline || (conflict && clock.now() - startedAtMs >= plan.idConflictWaitMs)) {
          throw error;
        }
        if (conflict && !toldOfConflict) {
          toldOfConflict = true;
          plan.logger.warn(
            { event: "id-conflict-wait" },
            `${(error as Error).message.replace(/; choose another agent id$/, "")}: if that is an earlier life of this agent, the others will suspect it within ${Math.ceil(plan.idConflictWaitMs / 1000)} s; waiting`,
          );
        }
        await sleep(clock, JOIN_RETRY_MS);
      }
    }
  }
  detector.start();
  if (seeds.length === 0) return false;
  const deadline = clock.now() + plan.settleMs;
  while (clock.now() < deadline) {
    const pending = detector.members().some((member) => member.status === "suspected");
    if (!pending) break;
    await sleep(clock, plan.pollMs);
  }
  return true;
}

/** What probing one seed address found (see `diagnoseTransport` in `src/security`). */
export type SeedProbe =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** A few words for a progress line, e.g. "connection refused". */
      readonly reason: string;
      /** The cause and what to do, for the error when joining fails. */
      readonly message: string;
      /** True when waiting may help (nothing listens there yet); false for a refusal that cannot pass. */
      readonly retryable: boolean;
    };

/** How {@link waitForSeeds} waits. */
export interface SeedWait {
  /** Addresses of live agents to join through. */
  readonly seeds: readonly string[];
  /** How long to keep trying, in ms. */
  readonly timeoutMs: number;
  /** Probes one address: does an agent this one can talk to answer there? */
  readonly probe: (address: string) => Promise<SeedProbe>;
  /** Where it says that it waits. */
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * Waits until one seed answers in a way this agent can join, before the join itself. Fails at once
 * (`PeerUnreachable`) when no seed answers and one refused in a way that cannot pass — TLS against
 * plaintext, another cluster's CA, a refused certificate — rather than retrying it until the timeout;
 * retries the rest (nothing listening yet), saying every few seconds what it waits for and how long is
 * left. Resolves to the time left of `timeoutMs`.
 */
export async function waitForSeeds(wait: SeedWait): Promise<number> {
  const { clock, seeds } = wait;
  const startedAtMs = clock.now();
  const deadline = startedAtMs + wait.timeoutMs;
  let nextProgressAtMs = startedAtMs;
  for (;;) {
    const probes = await Promise.all(seeds.map((seed) => wait.probe(seed)));
    if (probes.some((probe) => probe.ok)) return Math.max(0, deadline - clock.now());
    const failures = probes.flatMap((probe, i) => (probe.ok ? [] : [{ seed: seeds[i] as string, ...probe }]));
    const final = failures.filter((failure) => !failure.retryable);
    if (final.length > 0) {
      throw new UbiError(
        ErrorCode.PeerUnreachable,
        `cannot join the cluster: ${final.map((failure) => failure.message).join("; ")}`,
      );
    }
    const now = clock.now();
    const leftMs = deadline - now;
    const reasons = failures.map((failure) => `${failure.seed} (${failure.reason})`).join(", ");
    if (leftMs <= 0) {
      throw new UbiError(
        ErrorCode.PeerUnreachable,
        `cannot join the cluster: no agent answered within ${Math.round(wait.timeoutMs / 1000)} s at ` +
          `${reasons}. Check that an agent runs at a --join address, or raise --join-timeout-ms`,
      );
    }
    if (now >= nextProgressAtMs) {
      wait.logger.info(
        { event: "join-waiting" },
        `still trying to join ${reasons}, ${Math.ceil(leftMs / 1000)} s left`,
      );
      nextProgressAtMs = now + JOIN_PROGRESS_INTERVAL_MS;
    }
    await sleep(clock, Math.min(JOIN_RETRY_MS, leftMs));
  }
}

/**
 * How long an agent that may start the cluster (see {@link SeedChoice.founder}) tries the other agents
 * it knows of before starting alone.
 */
export const REMEMBERED_ONLY_WAIT_MS = 3000;

/** What {@link chooseSeeds} chooses from. */
export interface SeedChoice {
  /** The `--join` addresses (this agent's own left out). */
  readonly named: readonly string[];
  /** Addresses of the agents the data dir remembers (see `KnownPeers`), this agent's own left out. */
  readonly remembered: readonly string[];
  /**
   * True when this agent may start a cluster of its own: it has no `--join`, or it is the first `--join`
   * address. Every other agent waits for one to answer, so agents of one deployment started at once,
   * each failing to reach the others, form one cluster (the first address's), never one each.
   */
  readonly founder: boolean;
  /** How long to keep trying when this agent may not start the cluster. */
  readonly timeoutMs: number;
  readonly probe: (address: string) => Promise<SeedProbe>;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** The addresses a join goes through, and what is left of the join timeout. */
export interface ChosenSeeds {
  /** Empty: this agent starts alone (a new cluster, or the first agent back of one). */
  readonly seeds: readonly string[];
  readonly leftMs: number;
}

/**
 * Chooses the addresses to join through: the `--join` ones and every remembered agent, until one
 * answers (a remembered agent's refusal is only a hint gone stale, waited through like a silence, so it
 * never fails a join the named agents would pass). An agent that may start the cluster (the
 * `founder`) tries them for {@link REMEMBERED_ONLY_WAIT_MS}, taking every refusal as a hint, then
 * starts alone (the others join it, or find it at its address when they come back); any other waits
 * for them until the timeout.
 */
export async function chooseSeeds(choice: SeedChoice): Promise<ChosenSeeds> {
  const { named, logger, founder } = choice;
  const remembered = choice.remembered.filter((address) => !named.includes(address));
  const seeds = [...named, ...remembered];
  if (seeds.length === 0) return { seeds: [], leftMs: choice.timeoutMs };
  if (remembered.length > 0) {
    logger.info(
      { event: "rejoin-remembered", remembered },
      `${named.length > 0 ? `joining through ${named.join(", ")} or` : "trying"} the ${remembered.length === 1 ? "agent" : `${remembered.length} agents`} this data dir remembers: ${remembered.join(", ")}`,
    );
  }
  const hints = new Set(founder ? seeds : remembered);
  const probe = async (address: string): Promise<SeedProbe> => {
    const found = await choice.probe(address);
    return !found.ok && hints.has(address) ? { ...found, retryable: true } : found;
  };
  const wait = { probe, logger, clock: choice.clock, seeds };
  if (!founder) return { seeds, leftMs: await waitForSeeds({ ...wait, timeoutMs: choice.timeoutMs }) };
  try {
    await waitForSeeds({ ...wait, timeoutMs: REMEMBERED_ONLY_WAIT_MS });
    return { seeds, leftMs: choice.timeoutMs };
  } catch (error) {
    if (!isUbiError(error, ErrorCode.PeerUnreachable)) throw error;
    logger.info(
      { event: "rejoin-none-answered" },
      `none of ${seeds.join(", ")} answered within ${REMEMBERED_ONLY_WAIT_MS / 1000} s: starting the cluster ` +
        `(${named.length > 0 ? "this agent is the first --join address" : "no --join"}; the others join this agent when they are up)`,
    );
    return { seeds: [], leftMs: choice.timeoutMs };
  }
}
