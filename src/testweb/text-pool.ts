import { createRandom } from "./prng.js";

/** Vocabulary of the generated prose: plain English so pages look and compress like real text. */
const WORDS = (
  "the of and to in is that for it as was with be by on not he this are or his from at which but have an " +
  "they you were her she there been one all we their has would when if so no what up out who them some " +
  "crawler network page link host server index search engine archive document report study market city " +
  "river garden history science music travel recipe weather energy policy school library museum festival " +
  "harbor mountain village council budget project research design system data model theory practice " +
  "community history region language culture program software hardware protocol package release update " +
  "analysis measure average sample record season winter summer autumn spring morning evening quiet bright " +
  "simple careful rapid gentle ancient modern local global public private early late small large green " +
  "describes explains follows provides includes suggests remains becomes supports reaches builds opens"
).split(" ");

/** Number of paragraphs in the pool; pages pick from it by hash. */
export const PARAGRAPH_COUNT = 128;

/** The prose every page is assembled from, generated once per seed. */
export interface TextPool {
  /** Paragraph texts, 300–1,200 characters each, HTML-safe. */
  readonly paragraphs: readonly string[];
  /** The vocabulary, for titles and anchor texts. */
  readonly words: readonly string[];
}

function sentence(random: () => number): string {
  const length = 6 + Math.floor(random() * 14);
  const words: string[] = [];
  for (let i = 0; i < length; i++) words.push(WORDS[Math.floor(random() * WORDS.length)] as string);
  const text = words.join(" ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** Builds the paragraph pool for `seed`; pages are concatenations of these, so serving is cheap. */
export function buildTextPool(seed: number): TextPool {
  const random = createRandom(seed ^ 0x7e57);
  const paragraphs: string[] = [];
  for (let p = 0; p < PARAGRAPH_COUNT; p++) {
    const target = 300 + Math.floor(random() * 900);
    let text = "";
    while (text.length < target) text += (text === "" ? "" : " ") + sentence(random);
    paragraphs.push(text);
  }
  return { paragraphs, words: WORDS };
}
