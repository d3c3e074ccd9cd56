/**
 * grpc-js answers a message it cannot decode with a generic INTERNAL status. Wrapping the decoder
 * lets the server answer INVALID_ARGUMENT and the client report `BadMessage` instead.
 */

import type { deserialize as Deserialize } from "@grpc/grpc-js";

/** Stands in for a message whose bytes could not be decoded. */
export class Undecodable {
  constructor(
    /** Why decoding failed. */
    readonly reason: string,
  ) {}
}

/** A decoder that returns {@link Undecodable} instead of throwing. */
export function tolerant<T>(decode: Deserialize<T>): Deserialize<T | Undecodable> {
  return (bytes: Buffer) => {
    try {
      return decode(bytes);
    } catch (error) {
      return new Undecodable(error instanceof Error ? error.message : String(error));
    }
  };
}
