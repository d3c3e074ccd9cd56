// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One IP address among an agent's busiest, as that agent saw its own requests there. "The last
 * minute" is 50 to 60 s: the figures are kept in 10 s steps.
 */
export interface BusyAddress {
  /**
   * The address, as resolved by the agent.
   */
  'ip'?: (string);
  /**
   * Distinct hosts the agent sent requests to at the address (robots.txt and sitemaps included),
   * counted up to 100.
   */
  'hosts'?: (number | string | Long);
  /**
   * True when there are more than `hosts` (the count stopped at its bound).
   */
  'moreHosts'?: (boolean);
  /**
   * A few of those hosts (host or host:port), the first seen first.
   */
  'hostNames'?: (string)[];
  /**
   * The agent keeping the address's politeness: its IP authority (the owner of the address's key on
   * the circle) with `--ip-limit cluster`, the agent itself with `--ip-limit agent` or alone.
   */
  'keeper'?: (string);
  /**
   * The agent's requests in flight there now.
   */
  'inFlight'?: (number);
  /**
   * The agent's requests waiting for a slot there now (its own --max-per-ip, the keeper's grant, the
   * IP delay, a back-off).
   */
  'waiting'?: (number);
  /**
   * Requests the agent started there in the last minute.
   */
  'startedRecently'?: (number | string | Long);
  /**
   * Requests the agent started there since it remembers the address.
   */
  'started'?: (number | string | Long);
  /**
   * Mean time the requests started in the last minute waited for their slot, ms.
   */
  'meanWaitMsRecently'?: (number | string | Long);
  /**
   * Longest time one of them waited, ms.
   */
  'maxWaitMsRecently'?: (number | string | Long);
  /**
   * Time all the requests started there waited for their slots, ms.
   */
  'waitedMs'?: (number | string | Long);
  /**
   * Answers 429 or 503 from the address's server to the agent in the last minute.
   */
  'refusalsRecently'?: (number | string | Long);
  /**
   * Such answers since the agent remembers the address.
   */
  'refusals'?: (number | string | Long);
  /**
   * Asks waiting in the address's line at its keeper, as far as the agent knows: the whole line when
   * it is the keeper, else its own asks held there.
   */
  'line'?: (number);
  /**
   * Milliseconds before a request may start there again after its server pushed back, as far as the
   * agent knows (its own block, a lease's, or its own authority's): 0 for none. Alone, the agent slows
   * the refused host instead (`waiting` hosts, reason throttled).
   */
  'blockedForMs'?: (number | string | Long);
  /**
   * The least gap between two starts there in force, ms: the IP delay, or a longer robots.txt
   * Crawl-delay of a host there.
   */
  'delayMs'?: (number | string | Long);
}

/**
 * One IP address among an agent's busiest, as that agent saw its own requests there. "The last
 * minute" is 50 to 60 s: the figures are kept in 10 s steps.
 */
export interface BusyAddress__Output {
  /**
   * The address, as resolved by the agent.
   */
  'ip': (string);
  /**
   * Distinct hosts the agent sent requests to at the address (robots.txt and sitemaps included),
   * counted up to 100.
   */
  'hosts': (number);
  /**
   * True when there are more than `hosts` (the count stopped at its bound).
   */
  'moreHosts': (boolean);
  /**
   * A few of those hosts (host or host:port), the first seen first.
   */
  'hostNames': (string)[];
  /**
   * The agent keeping the address's politeness: its IP authority (the owner of the address's key on
   * the circle) with `--ip-limit cluster`, the agent itself with `--ip-limit agent` or alone.
   */
  'keeper': (string);
  /**
   * The agent's requests in flight there now.
   */
  'inFlight': (number);
  /**
   * The agent's requests waiting for a slot there now (its own --max-per-ip, the keeper's grant, the
   * IP delay, a back-off).
   */
  'waiting': (number);
  /**
   * Requests the agent started there in the last minute.
   */
  'startedRecently': (number);
  /**
   * Requests the agent started there since it remembers the address.
   */
  'started': (number);
  /**
   * Mean time the requests started in the last minute waited for their slot, ms.
   */
  'meanWaitMsRecently': (number);
  /**
   * Longest time one of them waited, ms.
   */
  'maxWaitMsRecently': (number);
  /**
   * Time all the requests started there waited for their slots, ms.
   */
  'waitedMs': (number);
  /**
   * Answers 429 or 503 from the address's server to the agent in the last minute.
   */
  'refusalsRecently': (number);
  /**
   * Such answers since the agent remembers the address.
   */
  'refusals': (number);
  /**
   * Asks waiting in the address's line at its keeper, as far as the agent knows: the whole line when
   * it is the keeper, else its own asks held there.
   */
  'line': (number);
  /**
   * Milliseconds before a request may start there again after its server pushed back, as far as the
   * agent knows (its own block, a lease's, or its own authority's): 0 for none. Alone, the agent slows
   * the refused host instead (`waiting` hosts, reason throttled).
   */
  'blockedForMs': (number);
  /**
   * The least gap between two starts there in force, ms: the IP delay, or a longer robots.txt
   * Crawl-delay of a host there.
   */
  'delayMs': (number);
}
