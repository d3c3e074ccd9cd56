// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * What a continuous crawl's revisits did since the agent's process started, and its plans pending.
 */
export interface RevisitStats {
  /**
   * Revisits planned (pages with a next fetch time).
   */
  'planned'?: (number | string | Long);
  /**
   * Due pages queued again.
   */
  'queued'?: (number | string | Long);
  /**
   * Revisits answered (error pages included).
   */
  'revisited'?: (number | string | Long);
  /**
   * Revisits answered 304 Not Modified.
   */
  'notModified'?: (number | string | Long);
  /**
   * Revisits answered 200 with the same payload as last time.
   */
  'unchanged'?: (number | string | Long);
  /**
   * Revisits that found the page changed.
   */
  'changed'?: (number | string | Long);
  /**
   * Revisits that failed for good (planned again).
   */
  'missed'?: (number | string | Long);
  /**
   * How late the earliest planned revisit is, in ms (0: none is due yet).
   */
  'overdueMs'?: (number | string | Long);
  /**
   * Page histories taken in with hosts handed to this agent (joins, leaves, claims), each planned here
   * unless this agent's own history of the page was later.
   */
  'received'?: (number | string | Long);
  /**
   * The estimated freshness of this agent's share now, 0 to 1: the expected share of its pages whose
   * copy is current, each page fresh with probability exp(-rate * time since its last visit), over a
   * uniform sample of its pages (0 while freshness_pages is 0).
   */
  'estimatedFreshness'?: (number | string);
  /**
   * The sampled pages estimated_freshness is computed over: those with a change-rate estimate or hint.
   */
  'freshnessPages'?: (number | string | Long);
  /**
   * The revisits a second this agent spends now (`--recrawl adaptive` or `proportional`): in a cluster,
   * its part of the budgets of the agents alive in its view, in proportion to its pages (AgentLoad's
   * revisit_pages and revisit_budget); alone, its own `--recrawl-budget`. 0 under `--recrawl fixed`.
   */
  'budget'?: (number | string);
  /**
   * The pages that budget is spent on: those planned by change rate. 0 under `--recrawl fixed`.
   */
  'budgetPages'?: (number | string | Long);
}

/**
 * What a continuous crawl's revisits did since the agent's process started, and its plans pending.
 */
export interface RevisitStats__Output {
  /**
   * Revisits planned (pages with a next fetch time).
   */
  'planned': (number);
  /**
   * Due pages queued again.
   */
  'queued': (number);
  /**
   * Revisits answered (error pages included).
   */
  'revisited': (number);
  /**
   * Revisits answered 304 Not Modified.
   */
  'notModified': (number);
  /**
   * Revisits answered 200 with the same payload as last time.
   */
  'unchanged': (number);
  /**
   * Revisits that found the page changed.
   */
  'changed': (number);
  /**
   * Revisits that failed for good (planned again).
   */
  'missed': (number);
  /**
   * How late the earliest planned revisit is, in ms (0: none is due yet).
   */
  'overdueMs': (number);
  /**
   * Page histories taken in with hosts handed to this agent (joins, leaves, claims), each planned here
   * unless this agent's own history of the page was later.
   */
  'received': (number);
  /**
   * The estimated freshness of this agent's share now, 0 to 1: the expected share of its pages whose
   * copy is current, each page fresh with probability exp(-rate * time since its last visit), over a
   * uniform sample of its pages (0 while freshness_pages is 0).
   */
  'estimatedFreshness': (number);
  /**
   * The sampled pages estimated_freshness is computed over: those with a change-rate estimate or hint.
   */
  'freshnessPages': (number);
  /**
   * The revisits a second this agent spends now (`--recrawl adaptive` or `proportional`): in a cluster,
   * its part of the budgets of the agents alive in its view, in proportion to its pages (AgentLoad's
   * revisit_pages and revisit_budget); alone, its own `--recrawl-budget`. 0 under `--recrawl fixed`.
   */
  'budget': (number);
  /**
   * The pages that budget is spent on: those planned by change rate. 0 under `--recrawl fixed`.
   */
  'budgetPages': (number);
}
