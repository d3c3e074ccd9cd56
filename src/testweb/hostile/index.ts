/**
 * The hostile web: hosts that drip, never end, bomb, lie about lengths, reset, break HTTP, loop, mangle
 * charsets and HTML, trap crawlers in infinite URL spaces or serve hostile robots.txt — beside a
 * well-behaved control host — on loopback (127.2.0.x), for robustness tests and chaos benchmarks.
 */
export { CHARSET_PAGES, type CharsetPage } from "./charsets.js";
export { CONTROL_LABEL, controlPaths } from "./control.js";
export { HOSTILE_DOMAIN, hostileHostName } from "./hostile-host.js";
export {
  type HostileWebOptions,
  type ResolvedHostileWebOptions,
  resolveHostileWebOptions,
} from "./options.js";
export { type HostileHostInfo, type RunningHostileWeb, startHostileWeb } from "./server.js";
export { type HostileOverlap, type HostileRequest, HostileTraffic } from "./traffic.js";
