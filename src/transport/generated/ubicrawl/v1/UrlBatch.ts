// Original file: proto/ubicrawl.proto

import type { DiscoveredUrl as _ubicrawl_v1_DiscoveredUrl, DiscoveredUrl__Output as _ubicrawl_v1_DiscoveredUrl__Output } from '../../ubicrawl/v1/DiscoveredUrl.js';

/**
 * A batch of URLs sent to the agent that owns their hosts.
 */
export interface UrlBatch {
  /**
   * Unique per sender (at most 128 chars): a retried batch with the same id is counted once.
   */
  'batchId'?: (string);
  /**
   * Id of the sending agent.
   */
  'fromId'?: (string);
  /**
   * At most 10,000 URLs.
   */
  'urls'?: (_ubicrawl_v1_DiscoveredUrl)[];
  /**
   * Set by an agent leaving gracefully: what it alone answered for (the URLs it handed to the agents
   * that stay, the links its pages gave to its own hosts), given to the receiver to keep. The receiver
   * records each URL in its outbox for the URL's owner, neither queueing nor sending it, and re-sends
   * it should that owner crash; a URL it owns itself it queues as any other.
   */
  'keepForOwners'?: (boolean);
}

/**
 * A batch of URLs sent to the agent that owns their hosts.
 */
export interface UrlBatch__Output {
  /**
   * Unique per sender (at most 128 chars): a retried batch with the same id is counted once.
   */
  'batchId': (string);
  /**
   * Id of the sending agent.
   */
  'fromId': (string);
  /**
   * At most 10,000 URLs.
   */
  'urls': (_ubicrawl_v1_DiscoveredUrl__Output)[];
  /**
   * Set by an agent leaving gracefully: what it alone answered for (the URLs it handed to the agents
   * that stay, the links its pages gave to its own hosts), given to the receiver to keep. The receiver
   * records each URL in its outbox for the URL's owner, neither queueing nor sending it, and re-sends
   * it should that owner crash; a URL it owns itself it queues as any other.
   */
  'keepForOwners': (boolean);
}
