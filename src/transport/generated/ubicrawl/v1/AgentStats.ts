// Original file: proto/ubicrawl.proto

import type { PeerView as _ubicrawl_v1_PeerView, PeerView__Output as _ubicrawl_v1_PeerView__Output } from '../../ubicrawl/v1/PeerView.js';
import type { PeerTraffic as _ubicrawl_v1_PeerTraffic, PeerTraffic__Output as _ubicrawl_v1_PeerTraffic__Output } from '../../ubicrawl/v1/PeerTraffic.js';
import type { MemberStatus as _ubicrawl_v1_MemberStatus, MemberStatus__Output as _ubicrawl_v1_MemberStatus__Output } from '../../ubicrawl/v1/MemberStatus.js';
import type { WaitingHosts as _ubicrawl_v1_WaitingHosts, WaitingHosts__Output as _ubicrawl_v1_WaitingHosts__Output } from '../../ubicrawl/v1/WaitingHosts.js';
import type { RevisitStats as _ubicrawl_v1_RevisitStats, RevisitStats__Output as _ubicrawl_v1_RevisitStats__Output } from '../../ubicrawl/v1/RevisitStats.js';
import type { BusyAddress as _ubicrawl_v1_BusyAddress, BusyAddress__Output as _ubicrawl_v1_BusyAddress__Output } from '../../ubicrawl/v1/BusyAddress.js';
import type { Long } from '@grpc/proto-loader';

/**
 * The partition statistics of one agent.
 */
export interface AgentStats {
  /**
   * The agent's id.
   */
  'id'?: (string);
  /**
   * The agent's `host:port`.
   */
  'address'?: (string);
  /**
   * The agent's capacity.
   */
  'capacity'?: (number);
  /**
   * Number of replicas the agent has on the circle (capacity times replicas per unit).
   */
  'replicas'?: (number);
  /**
   * Fraction of the hash circle (0 to 1) the agent owns in its own view.
   */
  'circleShare'?: (number | string);
  /**
   * The agent's view of the membership.
   */
  'view'?: (_ubicrawl_v1_PeerView)[];
  /**
   * Hosts the agent owns among those it knows.
   */
  'hostsOwned'?: (number | string | Long);
  /**
   * Hosts the agent has heard of (owned or not).
   */
  'hostsKnown'?: (number | string | Long);
  /**
   * Owned hosts currently being visited.
   */
  'hostsActive'?: (number | string | Long);
  /**
   * Owned hosts whose queue is exhausted.
   */
  'hostsDone'?: (number | string | Long);
  /**
   * Pages fetched (any status).
   */
  'pagesFetched'?: (number | string | Long);
  /**
   * Body bytes fetched.
   */
  'bytesFetched'?: (number | string | Long);
  /**
   * URLs waiting in the frontier.
   */
  'queuedUrls'?: (number | string | Long);
  /**
   * Per-peer URL exchange counters.
   */
  'peers'?: (_ubicrawl_v1_PeerTraffic)[];
  /**
   * URLs sent to other agents divided by pages fetched (each URL goes once: `links_to_other_agents`
   * counts the links behind them).
   */
  'communicationOverhead'?: (number | string);
  /**
   * Fetches avoided because a previous owner had the page (page recovery).
   */
  'pagesRecovered'?: (number | string | Long);
  /**
   * Error counts by error class (UbiError code).
   */
  'errors'?: ({[key: string]: number | string | Long});
  /**
   * Recent fetch throughput.
   */
  'pagesPerSecond'?: (number | string);
  /**
   * Milliseconds since the agent started.
   */
  'uptimeMs'?: (number | string | Long);
  /**
   * True when the agent has nothing queued and nothing in flight.
   */
  'idle'?: (boolean);
  /**
   * True when an operator paused fetching.
   */
  'paused'?: (boolean);
  /**
   * Owned hosts with queued URLs that wait for a crashed previous owner to come back before this agent
   * crawls them (the takeover grace, `--takeover-delay-ms`).
   */
  'hostsHeld'?: (number | string | Long);
  /**
   * Ids of the crashed agents whose hosts are held, in no particular order.
   */
  'heldFor'?: (string)[];
  /**
   * Links found on pages to hosts other agents own (what Cho and Garcia-Molina's exchange mode sends);
   * a URL among them already handed away is not sent again.
   */
  'linksToOtherAgents'?: (number | string | Long);
  /**
   * Pages fetched since the agent's process started (`pages_fetched` counts since the crawl began in
   * its data dir, across restarts).
   */
  'pagesFetchedThisRun'?: (number | string | Long);
  /**
   * How the agent that answered regards this agent: ALIVE for its own or a live answer; SUSPECTED or
   * LEFT for an agent that could not be asked, whose figures are the last ones known.
   */
  'status'?: (_ubicrawl_v1_MemberStatus);
  /**
   * Milliseconds since these figures were measured: 0 for a live answer.
   */
  'reportedMsAgo'?: (number | string | Long);
  /**
   * Owned hosts with queued URLs that wait, by reason, most hosts first.
   */
  'waiting'?: (_ubicrawl_v1_WaitingHosts)[];
  /**
   * Pages whose payload was stored before (here or by another agent), archived as WARC revisit records.
   */
  'duplicates'?: (number | string | Long);
  /**
   * Body bytes those revisits did not store again.
   */
  'duplicateBytes'?: (number | string | Long);
  /**
   * Messages sent to other agents about payload digests (CheckDigests and SettleDigests calls).
   */
  'digestMessages'?: (number | string | Long);
  /**
   * What a continuous crawl's revisits did since the agent's process started (--recrawl fixed or
   * adaptive); absent with --recrawl off.
   */
  'revisits'?: (_ubicrawl_v1_RevisitStats | null);
  /**
   * Payloads stored again although a response with the same payload was stored before, as counted by
   * this agent for the digests it owns when their agents told it: the copies a race left (a claim that
   * ran out, an agent that could not ask). Each agent stores a payload at most once, so a race of n
   * agents leaves at most n − 1 copies.
   */
  'payloadCopies'?: (number | string | Long);
  /**
   * Payloads this agent stored whole without its owner's answer (the owner slow or unreachable, or
   * another agent's claim outlived its lease): each one a possible copy, told to the owner once stored.
   */
  'payloadsUnchecked'?: (number | string | Long);
  /**
   * The IP addresses this agent's requests were busiest at lately, at most 10, busiest first: ranked by
   * requests started there in the last minute plus those in flight and waiting for a slot now; ties by
   * the longest wait in the last minute, then by address. Only addresses with a request in the last
   * minute (started, in flight, waiting or refused) are listed; each agent remembers the 1,024
   * addresses it used most recently.
   */
  'busiestIps'?: (_ubicrawl_v1_BusyAddress)[];
}

/**
 * The partition statistics of one agent.
 */
export interface AgentStats__Output {
  /**
   * The agent's id.
   */
  'id': (string);
  /**
   * The agent's `host:port`.
   */
  'address': (string);
  /**
   * The agent's capacity.
   */
  'capacity': (number);
  /**
   * Number of replicas the agent has on the circle (capacity times replicas per unit).
   */
  'replicas': (number);
  /**
   * Fraction of the hash circle (0 to 1) the agent owns in its own view.
   */
  'circleShare': (number);
  /**
   * The agent's view of the membership.
   */
  'view': (_ubicrawl_v1_PeerView__Output)[];
  /**
   * Hosts the agent owns among those it knows.
   */
  'hostsOwned': (number);
  /**
   * Hosts the agent has heard of (owned or not).
   */
  'hostsKnown': (number);
  /**
   * Owned hosts currently being visited.
   */
  'hostsActive': (number);
  /**
   * Owned hosts whose queue is exhausted.
   */
  'hostsDone': (number);
  /**
   * Pages fetched (any status).
   */
  'pagesFetched': (number);
  /**
   * Body bytes fetched.
   */
  'bytesFetched': (number);
  /**
   * URLs waiting in the frontier.
   */
  'queuedUrls': (number);
  /**
   * Per-peer URL exchange counters.
   */
  'peers': (_ubicrawl_v1_PeerTraffic__Output)[];
  /**
   * URLs sent to other agents divided by pages fetched (each URL goes once: `links_to_other_agents`
   * counts the links behind them).
   */
  'communicationOverhead': (number);
  /**
   * Fetches avoided because a previous owner had the page (page recovery).
   */
  'pagesRecovered': (number);
  /**
   * Error counts by error class (UbiError code).
   */
  'errors': ({[key: string]: number});
  /**
   * Recent fetch throughput.
   */
  'pagesPerSecond': (number);
  /**
   * Milliseconds since the agent started.
   */
  'uptimeMs': (number);
  /**
   * True when the agent has nothing queued and nothing in flight.
   */
  'idle': (boolean);
  /**
   * True when an operator paused fetching.
   */
  'paused': (boolean);
  /**
   * Owned hosts with queued URLs that wait for a crashed previous owner to come back before this agent
   * crawls them (the takeover grace, `--takeover-delay-ms`).
   */
  'hostsHeld': (number);
  /**
   * Ids of the crashed agents whose hosts are held, in no particular order.
   */
  'heldFor': (string)[];
  /**
   * Links found on pages to hosts other agents own (what Cho and Garcia-Molina's exchange mode sends);
   * a URL among them already handed away is not sent again.
   */
  'linksToOtherAgents': (number);
  /**
   * Pages fetched since the agent's process started (`pages_fetched` counts since the crawl began in
   * its data dir, across restarts).
   */
  'pagesFetchedThisRun': (number);
  /**
   * How the agent that answered regards this agent: ALIVE for its own or a live answer; SUSPECTED or
   * LEFT for an agent that could not be asked, whose figures are the last ones known.
   */
  'status': (_ubicrawl_v1_MemberStatus__Output);
  /**
   * Milliseconds since these figures were measured: 0 for a live answer.
   */
  'reportedMsAgo': (number);
  /**
   * Owned hosts with queued URLs that wait, by reason, most hosts first.
   */
  'waiting': (_ubicrawl_v1_WaitingHosts__Output)[];
  /**
   * Pages whose payload was stored before (here or by another agent), archived as WARC revisit records.
   */
  'duplicates': (number);
  /**
   * Body bytes those revisits did not store again.
   */
  'duplicateBytes': (number);
  /**
   * Messages sent to other agents about payload digests (CheckDigests and SettleDigests calls).
   */
  'digestMessages': (number);
  /**
   * What a continuous crawl's revisits did since the agent's process started (--recrawl fixed or
   * adaptive); absent with --recrawl off.
   */
  'revisits': (_ubicrawl_v1_RevisitStats__Output | null);
  /**
   * Payloads stored again although a response with the same payload was stored before, as counted by
   * this agent for the digests it owns when their agents told it: the copies a race left (a claim that
   * ran out, an agent that could not ask). Each agent stores a payload at most once, so a race of n
   * agents leaves at most n − 1 copies.
   */
  'payloadCopies': (number);
  /**
   * Payloads this agent stored whole without its owner's answer (the owner slow or unreachable, or
   * another agent's claim outlived its lease): each one a possible copy, told to the owner once stored.
   */
  'payloadsUnchecked': (number);
  /**
   * The IP addresses this agent's requests were busiest at lately, at most 10, busiest first: ranked by
   * requests started there in the last minute plus those in flight and waiting for a slot now; ties by
   * the longest wait in the last minute, then by address. Only addresses with a request in the last
   * minute (started, in flight, waiting or refused) are listed; each agent remembers the 1,024
   * addresses it used most recently.
   */
  'busiestIps': (_ubicrawl_v1_BusyAddress__Output)[];
}
