// Original file: proto/ubicrawl.proto

import type { ArchiveFile as _ubicrawl_v1_ArchiveFile, ArchiveFile__Output as _ubicrawl_v1_ArchiveFile__Output } from '../../ubicrawl/v1/ArchiveFile.js';

/**
 * An agent's archive: every WARC file in its WARC folder, ordered by name.
 */
export interface ArchiveList {
  /**
   * The agent's id.
   */
  'agentId'?: (string);
  /**
   * Its WARC files: finished ones, and the live one if any.
   */
  'files'?: (_ubicrawl_v1_ArchiveFile)[];
}

/**
 * An agent's archive: every WARC file in its WARC folder, ordered by name.
 */
export interface ArchiveList__Output {
  /**
   * The agent's id.
   */
  'agentId': (string);
  /**
   * Its WARC files: finished ones, and the live one if any.
   */
  'files': (_ubicrawl_v1_ArchiveFile__Output)[];
}
