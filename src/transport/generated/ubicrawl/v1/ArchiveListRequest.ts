// Original file: proto/ubicrawl.proto


/**
 * Asks for the agent's archive listing; no fields yet.
 */
export interface ArchiveListRequest {
}

/**
 * Asks for the agent's archive listing; no fields yet.
 */
export interface ArchiveListRequest__Output {
}
