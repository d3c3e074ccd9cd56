import type { HostInfo, WebModel } from "./model.js";
import { hash4, unit } from "./prng.js";

/**
 * The test web's per-host rate limits (`hostBytesPerSecond`): slow servers of different speeds, for
 * measuring a crawler's bandwidth control against.
 */

/** Bodies go in pieces of this long a time at the host's rate (and at least {@link MIN_PIECE_BYTES}). */
const PIECE_MS = 50;
const MIN_PIECE_BYTES = 1024;

/** Bytes per second `host` sends its bodies at, or undefined when the web sets no limits. */
export function hostRate(model: WebModel, host: HostInfo): number | undefined {
  const range = model.options.hostBytesPerSecond;
  if (range === undefined) return undefined;
  const u = unit(hash4(model.seed, host.salt, 0x7a7e, 0));
  return Math.round(range.min * (range.max / range.min) ** u);
}

/** The part of a response a throttled send writes to. */
export interface ThrottledSink {
  write(chunk: Uint8Array): unknown;
  end(): unknown;
  readonly destroyed: boolean;
}

/** Writes `body` to `sink` at `bytesPerSecond`, a piece every {@link PIECE_MS}, then ends it. */
export function sendThrottled(sink: ThrottledSink, body: Uint8Array, bytesPerSecond: number): void {
  const piece = Math.max(MIN_PIECE_BYTES, Math.round((bytesPerSecond * PIECE_MS) / 1000));
  let offset = 0;
  const next = () => {
    if (sink.destroyed) return;
    const end = Math.min(body.byteLength, offset + piece);
    sink.write(body.subarray(offset, end));
    const sent = end - offset;
    offset = end;
    if (offset >= body.byteLength) sink.end();
    else setTimeout(next, (sent * 1000) / bytesPerSecond);
  };
  next();
}
