import type { Clock } from "../clock.js";

/** How long an address found contended is treated so, ms (a lease's time). */
const CONTENDED_MEMORY_MS = 5_000;

/** Contended addresses remembered at most (beyond it, one more is treated as any other). */
const MAX_CONTENDED_REMEMBERED = 4_096;

/**
 * The addresses an agent found contended lately (told to wait for a full one, or granted a slot after
 * waiting in its line), each for a lease's time: asks there go held at once, and releases of slots
 * there are sent at once, since someone may wait for them (see cluster-ip-gate.ts).
 */
export class ContendedAddresses {
  /** Until when each address is treated as contended. */
  private readonly untilMs = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** True when `ip` was found contended lately. */
  has(ip: string): boolean {
    const untilMs = this.untilMs.get(ip);
    if (untilMs === undefined) return false;
    if (this.clock.now() < untilMs) return true;
    this.untilMs.delete(ip);
    return false;
  }

  /** `ip` is contended: for a lease's time, asks there go held and releases of slots there at once. */
  mark(ip: string): void {
    const now = this.clock.now();
    if (this.untilMs.size >= MAX_CONTENDED_REMEMBERED) {
      for (const [other, untilMs] of this.untilMs) if (now >= untilMs) this.untilMs.delete(other);
      if (this.untilMs.size >= MAX_CONTENDED_REMEMBERED) return;
    }
    this.untilMs.set(ip, now + CONTENDED_MEMORY_MS);
  }
}
