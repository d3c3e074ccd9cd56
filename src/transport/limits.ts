/**
 * Protocol limits shared by senders (to size their batches) and the server's validation. They bound
 * what one peer can make another allocate, whatever the message size limit.
 */

/** Agent ids: 1 to {@link MAX_ID_CHARS} characters of this set. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._-]+$/;

/** Longest agent id, in characters. */
export const MAX_ID_CHARS = 128;

/** Longest URL accepted in a batch or a page recovery query, in characters. */
export const MAX_URL_CHARS = 4096;

/** Most URLs in one `SubmitUrls` batch. */
export const MAX_URLS_PER_BATCH = 10_000;

/** Most hosts in one `ClaimHosts` or `HandOverHosts` message. */
export const MAX_HOSTS_PER_HAND_OVER = 1000;

/** Most bytes of done fingerprints (8 each) in one hand-over message, all hosts together. */
export const MAX_DONE_BYTES = 2 * 1024 * 1024;

/**
 * Most bytes of page histories (`HostHandOver.pages`, as {@link pageScheduleBytes} counts them) in one
 * hand-over message, all hosts together: with {@link MAX_DONE_BYTES}, within the 4 MiB message limit.
 */
export const MAX_PAGE_SCHEDULE_BYTES = 1024 * 1024;

/** Longest ETag of a page history on the wire, in characters. */
export const MAX_ETAG_CHARS = 1024;

/**
 * What one page history weighs against {@link MAX_PAGE_SCHEDULE_BYTES}: its text fields' UTF-8 bytes
 * plus 64 for its numbers and field tags (more than they take). Senders size their messages with it
 * and receivers check it.
 */
export function pageScheduleBytes(page: {
  readonly url: string;
  readonly etag: string;
  readonly lastModified: string;
  readonly captureDigest: string;
  readonly captureUrl: string;
  readonly captureDate: string;
  readonly captureRecordId: string;
  readonly changefreq: string;
}): number {
  const fields = [
    page.url,
    page.etag,
    page.lastModified,
    page.captureDigest,
    page.captureUrl,
    page.captureDate,
    page.captureRecordId,
    page.changefreq,
  ];
  return fields.reduce((sum, field) => sum + Buffer.byteLength(field), 64);
}

/** Longest batch id, in characters. */
export const MAX_BATCH_ID_CHARS = 128;

/** Longest `host:port` address, in characters (a 253-char DNS name, brackets, colon, port). */
export const MAX_ADDRESS_CHARS = 262;

/** Most members in a membership table or agents in a stats reply. */
export const MAX_MEMBERS = 10_000;

/**
 * Highest `--recrawl-budget`, revisits a second, and so the highest an agent reports in its heartbeats:
 * the sum of a whole cluster's stays finite (an agent spends that sum times its share of the pages).
 */
export const MAX_RECRAWL_BUDGET = 1_000_000;

/** Blacklist entries in one `SyncBlacklist` message at most. */
export const MAX_BLACKLIST_ENTRIES = 10_000;

/** Digests in one `CheckDigests` or `SettleDigests` message at most. */
export const MAX_DIGESTS_PER_MESSAGE = 500;

/** Asks, releases or refusals in one `IpGrants` message at most, and slots in one release. */
export const MAX_IP_ENTRIES = 1_000;

/** Characters of an IP address at most (IPv6 text with an embedded IPv4 address fits). */
export const MAX_IP_CHARS = 45;

/** Characters of a blacklist pattern at most (a host key is at most 262). */
export const MAX_BLACKLIST_PATTERN_CHARS = 262;

/** Longest control argument (a host pattern), in characters. */
export const MAX_CONTROL_ARGUMENT_CHARS = 4096;

/** Longest free-text message in a reply, in characters. */
export const MAX_REPLY_MESSAGE_CHARS = 65_536;

/** Most error classes in one agent's stats. */
export const MAX_ERROR_CLASSES = 1024;

/** Default cap on one received gRPC message, in bytes; larger ones get RESOURCE_EXHAUSTED. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
