/** Defaults of the assignment function (identifier-seeded consistent hashing). */

/**
 * Replicas on the circle per unit of capacity.
 *
 * Chosen by measurement with `bench/balance.mjs` (1,000,000 hosts; 2–64 agents; capacities uniform and
 * mixed 1,1,2,4): the worst max relative deviation of an agent's host share from its
 * capacity-proportional share was 48% at 50, 33% at 100, 20% at 200, 17% at 400, 10.4% at 800,
 * 7.0% at 1600 and 4.8% at 3200. 1600 is the smallest measured value under the 10% target; 64 agents
 * of mixed capacity (~205k replicas) still build in 15–40 ms, with 1.5–3M ownerOf lookups/s.
 * @default 1600
 */
export const DEFAULT_REPLICAS_PER_UNIT = 1600;

/** Capacity of an agent that does not state one. @default 1 */
export const DEFAULT_CAPACITY = 1;
