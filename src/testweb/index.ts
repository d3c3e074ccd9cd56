/**
 * The built-in test web: a deterministic synthetic web served over HTTP or HTTPS on loopback (127.1.x.y),
 * its hosts file, a recorder of what it served, and the ground truth a correct crawler must fetch.
 */

export { createTestWebCertificates, TEST_WEB_CA_FILE } from "./certificates.js";
export {
  CHANGE_PROCESSES,
  changeTimes,
  DEFAULT_CHANGE_SPREAD,
  isChanging,
  meanChangeIntervalMs,
  notModified,
  type PageChanges,
  type PageVersion,
  pageVersion,
} from "./changes.js";
export {
  CONTROL_LABEL,
  controlPaths,
  HOSTILE_DOMAIN,
  type HostileHostInfo,
  type HostileWebOptions,
  type RunningHostileWeb,
  startHostileWeb,
} from "./hostile/index.js";
export { hostsFileText, listenAddresses, seedUrls } from "./hosts-file.js";
export type { LinkGraph } from "./link-graph.js";
export {
  buildModel,
  DOMAIN,
  type HostInfo,
  type RobotsPolicy,
  TRAP_HOST_NAME,
  type WebModel,
} from "./model.js";
export {
  DEFAULT_MAX_ARTICLES_PER_HOST,
  DEFAULT_SHARED_ADDRESS_PERCENT,
  type ResolvedTestWebOptions,
  resolveTestWebOptions,
  TEST_WEB_SCHEMES,
  type TestWebOptions,
  type TestWebScheme,
} from "./options.js";
export { ServedRecorder, type ServedRecorderOptions, type ServedRequest } from "./recorder.js";
export { respond, type TestWebResponse } from "./responses.js";
export { ROBOTS_AGENT_TOKEN } from "./robots-txt.js";
export { type RunningTestWeb, startTestWeb, type TestWebTls, type TestWebTlsProvider } from "./server.js";
export { computeTruth, type Truth, type TruthLimits, type TruthOptions } from "./truth.js";
export { canonicalTarget } from "./url-space.js";
