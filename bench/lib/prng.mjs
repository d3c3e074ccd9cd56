// A small seeded PRNG shared by the benches and tests that draw schedules (kill moments, join times):
// the same seed replays the same schedule.

/** mulberry32: a function giving floats in [0, 1), the same sequence for the same 32-bit seed. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
