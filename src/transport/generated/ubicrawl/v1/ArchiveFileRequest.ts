// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Asks for one file of the listing.
 */
export interface ArchiveFileRequest {
  /**
   * A WARC file's name, or its index's (`<name>.cdxj`).
   */
  'name'?: (string);
  /**
   * Bytes to read from the start: the listing's length (a live file grows; a finished one is read
   * whole when 0).
   */
  'bytes'?: (number | string | Long);
}

/**
 * Asks for one file of the listing.
 */
export interface ArchiveFileRequest__Output {
  /**
   * A WARC file's name, or its index's (`<name>.cdxj`).
   */
  'name': (string);
  /**
   * Bytes to read from the start: the listing's length (a live file grows; a finished one is read
   * whole when 0).
   */
  'bytes': (number);
}
