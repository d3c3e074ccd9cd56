/** URL normalization, host keys, scope matching and 64-bit fingerprints. */

export { UrlFingerprinter } from "./fingerprint.js";
export { hostKey, hostnameOf, originOf } from "./host-key.js";
export { MAX_URL_LENGTH, normalizeUrl } from "./normalize.js";
export { normalizePercentEscapes } from "./percent.js";
export { inScope } from "./scope.js";
