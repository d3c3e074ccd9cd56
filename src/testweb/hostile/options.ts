import { invalidArgument } from "../../errors.js";

/** Options of the hostile web. Every field is optional; sizes default to what the brief calls hostile. */
export interface HostileWebOptions {
  /**
   * Port every host listens on; 0 picks one free on every address.
   * @default 0
   */
  port?: number;
  /**
   * Interval between two bytes of the slowloris headers and of the dripped body, ms.
   * @default 1000
   */
  dripIntervalMs?: number;
  /**
   * Declared (and, if read to the end, sent) size of the huge body, bytes; generated, never allocated.
   * @default 1073741824 (1 GiB)
   */
  hugeBodyBytes?: number;
  /**
   * Decoded size of the gzip bomb, bytes (rounded up to whole 64 MiB gzip members).
   * @default 4294967296 (4 GiB)
   */
  bombDecodedBytes?: number;
  /**
   * Length of the one attribute value of the big-attribute page, bytes.
   * @default 10000000
   */
  bigAttributeBytes?: number;
  /**
   * Number of distinct links on the many-links page.
   * @default 100000
   */
  manyLinks?: number;
  /**
   * Depth of the nested `<div>`s of the deep-nesting page.
   * @default 100000
   */
  nestingDepth?: number;
  /**
   * Size of the huge robots.txt, bytes.
   * @default 10000000
   */
  hugeRobotsBytes?: number;
  /**
   * Redirects in the redirect chain before its final page.
   * @default 20
   */
  redirectChainHops?: number;
  /**
   * Pages of the well-behaved control host, home page excluded.
   * @default 30
   */
  controlPages?: number;
  /**
   * Seed of the generated binary bodies.
   * @default 1
   */
  seed?: number;
}

/** {@link HostileWebOptions} with defaults applied and values checked. */
export interface ResolvedHostileWebOptions {
  readonly port: number;
  readonly dripIntervalMs: number;
  readonly hugeBodyBytes: number;
  readonly bombDecodedBytes: number;
  readonly bigAttributeBytes: number;
  readonly manyLinks: number;
  readonly nestingDepth: number;
  readonly hugeRobotsBytes: number;
  readonly redirectChainHops: number;
  readonly controlPages: number;
  readonly seed: number;
}

function integerIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    invalidArgument(`hostile web: ${name} must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

const GiB = 1024 * 1024 * 1024;

/** Applies defaults and validates; throws `UBI_ERR_INVALID_ARGUMENT` on a bad value. */
export function resolveHostileWebOptions(options: HostileWebOptions = {}): ResolvedHostileWebOptions {
  return {
    port: integerIn("port", options.port ?? 0, 0, 65_535),
    dripIntervalMs: integerIn("dripIntervalMs", options.dripIntervalMs ?? 1000, 1, 60_000),
    hugeBodyBytes: integerIn("hugeBodyBytes", options.hugeBodyBytes ?? GiB, 1, 2 ** 40),
    bombDecodedBytes: integerIn("bombDecodedBytes", options.bombDecodedBytes ?? 4 * GiB, 1, 2 ** 40),
    bigAttributeBytes: integerIn("bigAttributeBytes", options.bigAttributeBytes ?? 10_000_000, 1, 2 ** 30),
    manyLinks: integerIn("manyLinks", options.manyLinks ?? 100_000, 1, 10_000_000),
    nestingDepth: integerIn("nestingDepth", options.nestingDepth ?? 100_000, 1, 10_000_000),
    hugeRobotsBytes: integerIn("hugeRobotsBytes", options.hugeRobotsBytes ?? 10_000_000, 1024, 2 ** 30),
    redirectChainHops: integerIn("redirectChainHops", options.redirectChainHops ?? 20, 1, 1000),
    controlPages: integerIn("controlPages", options.controlPages ?? 30, 1, 10_000),
    seed: integerIn("seed", options.seed ?? 1, 0, 0xffffffff),
  };
}
