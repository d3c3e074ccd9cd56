import { endlessBodyHost, gzipBombHost, hugeBodyHost } from "./big-bodies.js";
import {
  http10Host,
  longLengthHost,
  malformedHost,
  resetMidBodyHost,
  shortLengthHost,
} from "./broken-http.js";
import { charsetsHost } from "./charsets.js";
import { controlHost } from "./control.js";
import type { HostileHost } from "./hostile-host.js";
import { calendarHost, sessionIdsHost } from "./infinite-space.js";
import { pathologicalHtmlHost } from "./pathological-html.js";
import { redirectChainHost, redirectLoopHost } from "./redirects.js";
import { robots5xxHost, robotsBinaryHost, robotsHugeHost, robotsTimeoutHost } from "./robots-hosts.js";
import { dripBodyHost, slowHeadersHost } from "./slow-hosts.js";
import { wrongTypesHost } from "./wrong-types.js";

/**
 * The hosts of one hostile web, control host first, in a fixed order (host i listens on 127.2.0.<i+1>).
 * Hosts with per-web state (caches, counters) are created afresh.
 */
export function createHostileHosts(): HostileHost[] {
  return [
    controlHost,
    slowHeadersHost,
    dripBodyHost,
    endlessBodyHost,
    hugeBodyHost,
    gzipBombHost,
    shortLengthHost,
    longLengthHost,
    resetMidBodyHost,
    http10Host,
    malformedHost,
    redirectLoopHost,
    redirectChainHost,
    charsetsHost,
    pathologicalHtmlHost(),
    sessionIdsHost(),
    calendarHost,
    robotsHugeHost(),
    robotsBinaryHost,
    robotsTimeoutHost,
    robots5xxHost,
    wrongTypesHost,
  ];
}
