/**
 * MT19937, the 32-bit Mersenne Twister of Matsumoto and Nishimura (mt19937ar.c, 2002), seeded with
 * `init_by_array`. Every agent draws its replica positions from it, so its output must be the same
 * on every machine and in every version: the tests pin it to the reference outputs.
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

/** A Mersenne Twister; `next()` returns the next 32-bit unsigned integer (`genrand_int32`). */
export class Mt19937 {
  readonly #state = new Uint32Array(N);
  #index = N;

  /** A generator seeded with `key` through `init_by_array`, as mt19937ar.c does. */
  constructor(key: Uint32Array) {
    if (key.length === 0) throw new RangeError("an MT19937 key needs at least one word");
    const mt = this.#state;
    initGenrand(mt, 19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (mt[i] ^ Math.imul(prev, 1566083941)) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = UPPER_MASK; // the most significant bit is 1: the initial state is not all zeros
  }

  /** The next output, an integer in [0, 2^32). */
  next(): number {
    if (this.#index >= N) this.#twist();
    let y = this.#state[this.#index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** Generates the next N words of state. */
  #twist(): void {
    const mt = this.#state;
    let k = 0;
    for (; k < N - M; k++) mt[k] = mix(mt[k + M], mt[k], mt[k + 1]);
    for (; k < N - 1; k++) mt[k] = mix(mt[k + M - N], mt[k], mt[k + 1]);
    mt[N - 1] = mix(mt[M - 1], mt[N - 1], mt[0]);
    this.#index = 0;
  }
}

/** One word of the twist: `far` xored with the twisted upper bit of `word` and lower bits of `next`. */
function mix(far: number, word: number, next: number): number {
  const y = (word & UPPER_MASK) | (next & LOWER_MASK);
  return far ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
}

/** `init_genrand(s)`: the linear seeding `init_by_array` starts from. */
function initGenrand(mt: Uint32Array, seed: number): void {
  mt[0] = seed;
  for (let i = 1; i < N; i++) {
    const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
    mt[i] = Math.imul(1812433253, prev) + i;
  }
}
