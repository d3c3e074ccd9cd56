// Original file: proto/ubicrawl.proto

/**
 * How an agent currently regards a member.
 */
export const MemberStatus = {
  /**
   * Not set; refused by validation.
   */
  MEMBER_STATUS_UNSPECIFIED: 'MEMBER_STATUS_UNSPECIFIED',
  /**
   * Heard from recently.
   */
  ALIVE: 'ALIVE',
  /**
   * Not heard from within the suspicion timeout; its hosts are still assigned to it.
   */
  SUSPECTED: 'SUSPECTED',
  /**
   * Left on purpose or declared dead; takes no part in the assignment.
   */
  LEFT: 'LEFT',
} as const;

/**
 * How an agent currently regards a member.
 */
export type MemberStatus =
  /**
   * Not set; refused by validation.
   */
  | 'MEMBER_STATUS_UNSPECIFIED'
  | 0
  /**
   * Heard from recently.
   */
  | 'ALIVE'
  | 1
  /**
   * Not heard from within the suspicion timeout; its hosts are still assigned to it.
   */
  | 'SUSPECTED'
  | 2
  /**
   * Left on purpose or declared dead; takes no part in the assignment.
   */
  | 'LEFT'
  | 3

/**
 * How an agent currently regards a member.
 */
export type MemberStatus__Output = typeof MemberStatus[keyof typeof MemberStatus]
