// Memory of an agent's URL-seen set for a given number of URLs, from the real SeenSet's sizing: the
// segments grow by how many fingerprints fall in each, so filling a fresh set with as many
// pseudo-random ones reproduces its size within a few growth steps.
import { SeenSet } from "../../dist/frontier/index.js";

/**
 * Bytes the seen set of an agent holding `urls` fingerprints uses, by filling a fresh {@link SeenSet}
 * with as many distinct pseudo-random fingerprints (as an agent that started empty does).
 * @param {number} urls
 * @returns {{ urls: number, bytes: number, bytesPerUrl: number }}
 */
export function seenSetMemory(urls) {
  const seen = new SeenSet();
  // xorshift32 halves: distinct enough for a table of this size; duplicates are re-drawn.
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  while (seen.size < urls) seen.addParts(next(), next());
  return { urls, bytes: seen.memoryBytes, bytesPerUrl: urls === 0 ? 0 : seen.memoryBytes / urls };
}
