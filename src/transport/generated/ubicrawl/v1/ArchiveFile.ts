// Original file: proto/ubicrawl.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One WARC file of an agent, finished or being written.
 */
export interface ArchiveFile {
  /**
   * Its finished name (`<prefix>-<yyyyMMddHHmmss>-<serial>-<agent id>.warc.gz` or `.warc.zst`).
   */
  'name'?: (string);
  /**
   * Its length in bytes; of the live file, the whole records appended so far (a valid WARC file).
   */
  'bytes'?: (number | string | Long);
  /**
   * The length of its CDXJ index (`<name>.cdxj`); 0 when it has none (the live file, or a lost index).
   */
  'indexBytes'?: (number | string | Long);
  /**
   * True for the file being written (served up to `bytes`; its index is made by the reader).
   */
  'live'?: (boolean);
}

/**
 * One WARC file of an agent, finished or being written.
 */
export interface ArchiveFile__Output {
  /**
   * Its finished name (`<prefix>-<yyyyMMddHHmmss>-<serial>-<agent id>.warc.gz` or `.warc.zst`).
   */
  'name': (string);
  /**
   * Its length in bytes; of the live file, the whole records appended so far (a valid WARC file).
   */
  'bytes': (number);
  /**
   * The length of its CDXJ index (`<name>.cdxj`); 0 when it has none (the live file, or a lost index).
   */
  'indexBytes': (number);
  /**
   * True for the file being written (served up to `bytes`; its index is made by the reader).
   */
  'live': (boolean);
}
