// Original file: proto/ubicrawl.proto


/**
 * A piece of a file, in order.
 */
export interface ArchiveChunk {
  /**
   * At most 256 KiB of the file.
   */
  'data'?: (Buffer | Uint8Array | string);
}

/**
 * A piece of a file, in order.
 */
export interface ArchiveChunk__Output {
  /**
   * At most 256 KiB of the file.
   */
  'data': (Buffer);
}
