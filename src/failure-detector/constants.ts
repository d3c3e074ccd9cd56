/** Defaults of the failure detector. */

/** How often each pair of members exchanges a heartbeat (the smaller id asks). @default 1000 */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 1000;

/** A member not heard from for this long becomes suspected. @default 5000 */
export const DEFAULT_SUSPECT_AFTER_MS = 5000;

/** A suspected or departed member not heard from for this long is dropped from the view. @default 3600000 */
export const DEFAULT_FORGET_AFTER_MS = 60 * 60 * 1000;
