// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Counters for distributed termination detection: the crawl is over when every live agent is
 * idle and the cluster-wide batches sent equal batches received in two consecutive rounds.
 */
export interface AgentLoad {
  /**
   * True when the agent has nothing queued and nothing in flight.
   */
  'idle'?: (boolean);
  /**
   * URL batches this agent has sent and had acknowledged since it started.
   */
  'urlBatchesSent'?: (number | string | Long);
  /**
   * URL batches this agent has received and accepted since it started (retries counted once).
   */
  'urlBatchesReceived'?: (number | string | Long);
  /**
   * Pages this agent has fetched since it started.
   */
  'pagesFetched'?: (number | string | Long);
  /**
   * URLs waiting in this agent's frontier.
   */
  'queuedUrls'?: (number | string | Long);
  /**
   * Hosts this agent could start visiting now (it visits `--max-active-hosts` at once) but has no URL
   * of: a sender's batch holding a host it never sent this agent is then urgent, so a new host (maybe
   * the crawl's biggest) starts at once. 0 from agents that predate it: no batch is urgent for it.
   */
  'spareHostSlots'?: (number | string | Long);
  /**
   * Pages whose revisits this agent plans by change rate (`--recrawl adaptive` or `proportional`),
   * those its revisit budget is shared among. 0 from agents that do not, or that predate the field.
   */
  'revisitPages'?: (number | string | Long);
  /**
   * This agent's own `--recrawl-budget`, revisits a second (at most 1,000,000); 0 under `--recrawl off`
   * or `fixed`, and past its `--recrawl-horizon`. The agents reporting a budget spend the sum of their
   * budgets together, each in proportion to its pages (one with no page adds its budget to the others').
   */
  'revisitBudget'?: (number | string);
}

/**
 * Counters for distributed termination detection: the crawl is over when every live agent is
 * idle and the cluster-wide batches sent equal batches received in two consecutive rounds.
 */
export interface AgentLoad__Output {
  /**
   * True when the agent has nothing queued and nothing in flight.
   */
  'idle': (boolean);
  /**
   * URL batches this agent has sent and had acknowledged since it started.
   */
  'urlBatchesSent': (number);
  /**
   * URL batches this agent has received and accepted since it started (retries counted once).
   */
  'urlBatchesReceived': (number);
  /**
   * Pages this agent has fetched since it started.
   */
  'pagesFetched': (number);
  /**
   * URLs waiting in this agent's frontier.
   */
  'queuedUrls': (number);
  /**
   * Hosts this agent could start visiting now (it visits `--max-active-hosts` at once) but has no URL
   * of: a sender's batch holding a host it never sent this agent is then urgent, so a new host (maybe
   * the crawl's biggest) starts at once. 0 from agents that predate it: no batch is urgent for it.
   */
  'spareHostSlots': (number);
  /**
   * Pages whose revisits this agent plans by change rate (`--recrawl adaptive` or `proportional`),
   * those its revisit budget is shared among. 0 from agents that do not, or that predate the field.
   */
  'revisitPages': (number);
  /**
   * This agent's own `--recrawl-budget`, revisits a second (at most 1,000,000); 0 under `--recrawl off`
   * or `fixed`, and past its `--recrawl-horizon`. The agents reporting a budget spend the sum of their
   * budgets together, each in proportion to its pages (one with no page adds its budget to the others').
   */
  'revisitBudget': (number);
}
