// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * What a member has fetched in all, as far as the sender knows: carried by every heartbeat for every
 * member the sender has figures of (itself included, left and crashed ones too), so an agent that
 * joins after another left still counts that agent's pages, and `GetStats` with `cluster` gives the
 * same totals through every agent. The counts only grow: a receiver keeps the highest it heard.
 */
export interface MemberFigures {
  /**
   * The member's id.
   */
  'id'?: (string);
  /**
   * Pages the member has fetched, over all its runs.
   */
  'pagesFetched'?: (number | string | Long);
  /**
   * Body bytes the member has fetched, over all its runs.
   */
  'bytesFetched'?: (number | string | Long);
  /**
   * Pages the member learned it need not fetch from the previous owners of its hosts (page recovery).
   */
  'pagesRecovered'?: (number | string | Long);
  /**
   * The member's fetch errors by class (as `AgentStats.errors`).
   */
  'errors'?: ({[key: string]: number | string | Long});
}

/**
 * What a member has fetched in all, as far as the sender knows: carried by every heartbeat for every
 * member the sender has figures of (itself included, left and crashed ones too), so an agent that
 * joins after another left still counts that agent's pages, and `GetStats` with `cluster` gives the
 * same totals through every agent. The counts only grow: a receiver keeps the highest it heard.
 */
export interface MemberFigures__Output {
  /**
   * The member's id.
   */
  'id': (string);
  /**
   * Pages the member has fetched, over all its runs.
   */
  'pagesFetched': (number);
  /**
   * Body bytes the member has fetched, over all its runs.
   */
  'bytesFetched': (number);
  /**
   * Pages the member learned it need not fetch from the previous owners of its hosts (page recovery).
   */
  'pagesRecovered': (number);
  /**
   * The member's fetch errors by class (as `AgentStats.errors`).
   */
  'errors': ({[key: string]: number});
}
