// Original file: proto/ubicrawl.proto

import type { HandOverStatus as _ubicrawl_v1_HandOverStatus, HandOverStatus__Output as _ubicrawl_v1_HandOverStatus__Output } from '../../ubicrawl/v1/HandOverStatus.js';
import type { Member as _ubicrawl_v1_Member, Member__Output as _ubicrawl_v1_Member__Output } from '../../ubicrawl/v1/Member.js';
import type { PageSchedule as _ubicrawl_v1_PageSchedule, PageSchedule__Output as _ubicrawl_v1_PageSchedule__Output } from '../../ubicrawl/v1/PageSchedule.js';
import type { Long } from '@grpc/proto-loader';

/**
 * One host handed over (or not).
 */
export interface HostHandOver {
  /**
   * The host key.
   */
  'host'?: (string);
  /**
   * What the sender says of the host's crawl.
   */
  'status'?: (_ubicrawl_v1_HandOverStatus);
  /**
   * PASSED: the agent that holds the crawl now. NOT_YOURS: the owner in the sender's view. NOT_HELD
   * (optional): the agent that owned the host before the claimant in the sender's view; a claimant that
   * has not heard from it yet waits for it rather than take the host.
   */
  'holder'?: (_ubicrawl_v1_Member | null);
  /**
   * Fingerprints (xxhash64 of the canonical URL, 8 bytes big-endian each) of the host's URLs the sender
   * has done (fetched, or failed for good), at most 2 MiB in one message.
   */
  'done'?: (Buffer | Uint8Array | string);
  /**
   * More done fingerprints follow: claim the host again with `skip` (or, pushed, in a later message).
   */
  'more'?: (boolean);
  /**
   * Pages the sender fetched of the host, those handed to it included (for the per-host page limit).
   */
  'pagesFetched'?: (number | string | Long);
  /**
   * Why the host was given up, if it was (e.g. robots.txt unavailable); empty otherwise.
   */
  'abandoned'?: (string);
  /**
   * The revisit schedule of the host's pages the sender keeps (`--recrawl`): one history per page, at
   * most 1 MiB of them in one message, all hosts together (see `PageSchedule`); `more` also says that
   * more of them follow (claimed again with `skip_pages`, or, pushed, in a later message).
   */
  'pages'?: (_ubicrawl_v1_PageSchedule)[];
}

/**
 * One host handed over (or not).
 */
export interface HostHandOver__Output {
  /**
   * The host key.
   */
  'host': (string);
  /**
   * What the sender says of the host's crawl.
   */
  'status': (_ubicrawl_v1_HandOverStatus__Output);
  /**
   * PASSED: the agent that holds the crawl now. NOT_YOURS: the owner in the sender's view. NOT_HELD
   * (optional): the agent that owned the host before the claimant in the sender's view; a claimant that
   * has not heard from it yet waits for it rather than take the host.
   */
  'holder': (_ubicrawl_v1_Member__Output | null);
  /**
   * Fingerprints (xxhash64 of the canonical URL, 8 bytes big-endian each) of the host's URLs the sender
   * has done (fetched, or failed for good), at most 2 MiB in one message.
   */
  'done': (Buffer);
  /**
   * More done fingerprints follow: claim the host again with `skip` (or, pushed, in a later message).
   */
  'more': (boolean);
  /**
   * Pages the sender fetched of the host, those handed to it included (for the per-host page limit).
   */
  'pagesFetched': (number);
  /**
   * Why the host was given up, if it was (e.g. robots.txt unavailable); empty otherwise.
   */
  'abandoned': (string);
  /**
   * The revisit schedule of the host's pages the sender keeps (`--recrawl`): one history per page, at
   * most 1 MiB of them in one message, all hosts together (see `PageSchedule`); `more` also says that
   * more of them follow (claimed again with `skip_pages`, or, pushed, in a later message).
   */
  'pages': (_ubicrawl_v1_PageSchedule__Output)[];
}
