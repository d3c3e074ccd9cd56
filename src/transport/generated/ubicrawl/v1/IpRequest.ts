// Original file: proto/ubicrawl.proto

import type { IpRelease as _ubicrawl_v1_IpRelease, IpRelease__Output as _ubicrawl_v1_IpRelease__Output } from '../../ubicrawl/v1/IpRelease.js';
import type { IpRefusal as _ubicrawl_v1_IpRefusal, IpRefusal__Output as _ubicrawl_v1_IpRefusal__Output } from '../../ubicrawl/v1/IpRefusal.js';
import type { IpAsk as _ubicrawl_v1_IpAsk, IpAsk__Output as _ubicrawl_v1_IpAsk__Output } from '../../ubicrawl/v1/IpAsk.js';
import type { IpCrawlDelay as _ubicrawl_v1_IpCrawlDelay, IpCrawlDelay__Output as _ubicrawl_v1_IpCrawlDelay__Output } from '../../ubicrawl/v1/IpCrawlDelay.js';
import type { IpHandOff as _ubicrawl_v1_IpHandOff, IpHandOff__Output as _ubicrawl_v1_IpHandOff__Output } from '../../ubicrawl/v1/IpHandOff.js';

/**
 * What `from_id` asks of the addresses the receiver is the authority of (see `IpGrants`).
 */
export interface IpRequest {
  /**
   * Id of the asking agent.
   */
  'fromId'?: (string);
  /**
   * Requests to the receiver's addresses that ended, at most 1,000 entries.
   */
  'releases'?: (_ubicrawl_v1_IpRelease)[];
  /**
   * Refusals (429, 503) the sender's requests met, at most 1,000.
   */
  'refusals'?: (_ubicrawl_v1_IpRefusal)[];
  /**
   * At most 1,000 asks, each answered by one grant.
   */
  'asks'?: (_ubicrawl_v1_IpAsk)[];
  /**
   * Addresses the sender has become the authority of, in its view, whose authority the receiver was
   * (at most 1,000): the receiver grants nothing there for a grace period and answers each in
   * `handed_over`.
   */
  'takeOver'?: (string)[];
  /**
   * Crawl-delays that hosts at the receiver's addresses ask for in their robots.txt (at most 1,000):
   * every agent's requests to such an address are spaced by the longest, for a minute after its last
   * report (senders report again every 20 s while they use the address).
   */
  'crawlDelays'?: (_ubicrawl_v1_IpCrawlDelay)[];
  /**
   * Addresses the sender hands over as it leaves the cluster gracefully (at most 1,000 a request):
   * those of its addresses whose authority the receiver becomes without it, where it granted what may
   * still run. Sent before the sender announces its leave; the sender grants nothing anywhere from the
   * first of them on.
   */
  'handedOff'?: (_ubicrawl_v1_IpHandOff)[];
  /**
   * True on the last request of the sender's leave to the receiver: every address of the sender's whose
   * authority the receiver becomes without it is handed over, in `handed_off` of this request or an
   * earlier one, or had nothing that may still run. The receiver then takes those addresses as they
   * were handed over, instead of waiting out a grace period as for an agent that crashed.
   */
  'leaving'?: (boolean);
  /**
   * With `leaving`: the ids of the agents in the sender's view as it handed over (itself included). The
   * receiver takes the hand-over only for a change of its view from exactly these agents (views that
   * disagree, or another agent leaving at once, may give an address to an agent the sender did not
   * send it to); otherwise it waits out the grace as for a crash. With `gone_authority`: the sender's
   * view after that agent left it.
   */
  'view'?: (string)[];
  /**
   * Set when agent `gone_authority` left the sender's view (it crashed, or left): the sender tells every
   * agent of its view what it may still have in flight at each address, in `holdings` (at most 1,000 a request; the last request has `holdings_last`). An address's
   * new authority that heard from every agent of the view before, each in the same view after, counts
   * what they hold and goes on at once, instead of waiting out a crashed authority's grace.
   */
  'goneAuthority'?: (string);
  /**
   * With `gone_authority`: by address, every address where the sender may still have requests in
   * flight, whoever granted them (`IpHandOver.held`: a running lease of another authority counts
   * --max-per-ip, as that one counts it; a lease of the agent gone ends as the sender reports, and counts
   * the requests still running under it), how long they may run, and the block and spacing the sender
   * knows of (a lease's block included).
   */
  'holdings'?: (_ubicrawl_v1_IpHandOff)[];
  /**
   * With `gone_authority`: the sender's last request about that agent (none of its holdings is left).
   */
  'holdingsLast'?: (boolean);
  /**
   * Addresses the sender kept while it took the receiver for dead (or a partition cut them apart), whose
   * authority the receiver is again in the sender's view now that it is back as the same life: what the
   * sender granted there that may still run (at most 1,000 a request). The sender grants nothing there
   * any more and sends their releases on to the receiver, which counts them on top of its own account,
   * once per address and sender (whether handed back or asked for with `take_over`). A receiver whose
   * view never changed would not ask: it never took the sender for the authority of its addresses.
   */
  'handedBack'?: (_ubicrawl_v1_IpHandOff)[];
}

/**
 * What `from_id` asks of the addresses the receiver is the authority of (see `IpGrants`).
 */
export interface IpRequest__Output {
  /**
   * Id of the asking agent.
   */
  'fromId': (string);
  /**
   * Requests to the receiver's addresses that ended, at most 1,000 entries.
   */
  'releases': (_ubicrawl_v1_IpRelease__Output)[];
  /**
   * Refusals (429, 503) the sender's requests met, at most 1,000.
   */
  'refusals': (_ubicrawl_v1_IpRefusal__Output)[];
  /**
   * At most 1,000 asks, each answered by one grant.
   */
  'asks': (_ubicrawl_v1_IpAsk__Output)[];
  /**
   * Addresses the sender has become the authority of, in its view, whose authority the receiver was
   * (at most 1,000): the receiver grants nothing there for a grace period and answers each in
   * `handed_over`.
   */
  'takeOver': (string)[];
  /**
   * Crawl-delays that hosts at the receiver's addresses ask for in their robots.txt (at most 1,000):
   * every agent's requests to such an address are spaced by the longest, for a minute after its last
   * report (senders report again every 20 s while they use the address).
   */
  'crawlDelays': (_ubicrawl_v1_IpCrawlDelay__Output)[];
  /**
   * Addresses the sender hands over as it leaves the cluster gracefully (at most 1,000 a request):
   * those of its addresses whose authority the receiver becomes without it, where it granted what may
   * still run. Sent before the sender announces its leave; the sender grants nothing anywhere from the
   * first of them on.
   */
  'handedOff': (_ubicrawl_v1_IpHandOff__Output)[];
  /**
   * True on the last request of the sender's leave to the receiver: every address of the sender's whose
   * authority the receiver becomes without it is handed over, in `handed_off` of this request or an
   * earlier one, or had nothing that may still run. The receiver then takes those addresses as they
   * were handed over, instead of waiting out a grace period as for an agent that crashed.
   */
  'leaving': (boolean);
  /**
   * With `leaving`: the ids of the agents in the sender's view as it handed over (itself included). The
   * receiver takes the hand-over only for a change of its view from exactly these agents (views that
   * disagree, or another agent leaving at once, may give an address to an agent the sender did not
   * send it to); otherwise it waits out the grace as for a crash. With `gone_authority`: the sender's
   * view after that agent left it.
   */
  'view': (string)[];
  /**
   * Set when agent `gone_authority` left the sender's view (it crashed, or left): the sender tells every
   * agent of its view what it may still have in flight at each address, in `holdings` (at most 1,000 a request; the last request has `holdings_last`). An address's
   * new authority that heard from every agent of the view before, each in the same view after, counts
   * what they hold and goes on at once, instead of waiting out a crashed authority's grace.
   */
  'goneAuthority': (string);
  /**
   * With `gone_authority`: by address, every address where the sender may still have requests in
   * flight, whoever granted them (`IpHandOver.held`: a running lease of another authority counts
   * --max-per-ip, as that one counts it; a lease of the agent gone ends as the sender reports, and counts
   * the requests still running under it), how long they may run, and the block and spacing the sender
   * knows of (a lease's block included).
   */
  'holdings': (_ubicrawl_v1_IpHandOff__Output)[];
  /**
   * With `gone_authority`: the sender's last request about that agent (none of its holdings is left).
   */
  'holdingsLast': (boolean);
  /**
   * Addresses the sender kept while it took the receiver for dead (or a partition cut them apart), whose
   * authority the receiver is again in the sender's view now that it is back as the same life: what the
   * sender granted there that may still run (at most 1,000 a request). The sender grants nothing there
   * any more and sends their releases on to the receiver, which counts them on top of its own account,
   * once per address and sender (whether handed back or asked for with `take_over`). A receiver whose
   * view never changed would not ask: it never took the sender for the authority of its addresses.
   */
  'handedBack': (_ubicrawl_v1_IpHandOff__Output)[];
}
