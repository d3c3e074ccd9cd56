// Original file: proto/ubicrawl.proto


/**
 * Acknowledgement of DigestSettlements.
 */
export interface DigestSettleAck {
}

/**
 * Acknowledgement of DigestSettlements.
 */
export interface DigestSettleAck__Output {
}
