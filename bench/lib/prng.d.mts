/** mulberry32: a function giving floats in [0, 1), the same sequence for the same 32-bit seed. */
export function seededRandom(seed: number): () => number;
