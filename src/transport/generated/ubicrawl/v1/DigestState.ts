// Original file: proto/ubicrawl.proto

/**
 * What is known of one payload digest.
 */
export const DigestState = {
  /**
   * Not set; refused by validation.
   */
  DIGEST_STATE_UNSPECIFIED: 'DIGEST_STATE_UNSPECIFIED',
  /**
   * Stored before, by `original`.
   */
  DIGEST_SEEN: 'DIGEST_SEEN',
  /**
   * Not stored yet: the asker claims it, stores its response and settles the claim.
   */
  DIGEST_NEW: 'DIGEST_NEW',
  /**
   * Another agent claimed it and has not settled yet: ask again shortly.
   */
  DIGEST_PENDING: 'DIGEST_PENDING',
} as const;

/**
 * What is known of one payload digest.
 */
export type DigestState =
  /**
   * Not set; refused by validation.
   */
  | 'DIGEST_STATE_UNSPECIFIED'
  | 0
  /**
   * Stored before, by `original`.
   */
  | 'DIGEST_SEEN'
  | 1
  /**
   * Not stored yet: the asker claims it, stores its response and settles the claim.
   */
  | 'DIGEST_NEW'
  | 2
  /**
   * Another agent claimed it and has not settled yet: ask again shortly.
   */
  | 'DIGEST_PENDING'
  | 3

/**
 * What is known of one payload digest.
 */
export type DigestState__Output = typeof DigestState[keyof typeof DigestState]
