/** Fetching: undici-based fetcher, hosts-file and system DNS resolvers, and the `--allow-net` policy. */

export {
  BANDWIDTH_CONTROLS,
  type BandwidthControl,
  BandwidthGate,
  type BandwidthGateDeps,
  type BandwidthGateOptions,
  type BandwidthTicket,
  DEFAULT_BANDWIDTH_SEARCH_DEPTH,
} from "./bandwidth-gate.js";
export { decodeBody } from "./decode.js";
export { classifyFetchError, failureReason } from "./fetch-errors.js";
export { type FetchOptions, type FetchResult, responseHeader } from "./fetch-result.js";
export {
  DEFAULT_MIN_BYTES_PER_SECOND,
  DEFAULT_RATE_WINDOW_MS,
  Fetcher,
  type FetcherDeps,
  type FetcherOptions,
} from "./fetcher.js";
export { HostsFileResolver } from "./hosts-file-resolver.js";
export { NetPolicy, type NetPolicyOptions } from "./net-policy.js";
export type { Resolver } from "./resolver.js";
export {
  lookupAllAddresses,
  SystemResolver,
  type SystemResolverDeps,
  type SystemResolverOptions,
} from "./system-resolver.js";
export { type TransferForecast, TransferRates } from "./transfer-rates.js";
export { readCaFiles, trustedCertificates } from "./trust-store.js";
