import type { GossipEntry, MemberEntry, MemberStatus } from "../failure-detector/index.js";
import type { Member, MemberStatus as WireStatus } from "../transport/index.js";

const TO_WIRE: Record<MemberStatus, WireStatus> = { alive: "ALIVE", suspected: "SUSPECTED", left: "LEFT" };
const FROM_WIRE: Record<WireStatus, MemberStatus> = { ALIVE: "alive", SUSPECTED: "suspected", LEFT: "left" };

/** A membership entry as sent on the wire (`last_heard_ms_ago` relative to `nowMs`). */
export function toWireMember(entry: GossipEntry | MemberEntry, nowMs: number): Member {
  const lastHeardMs = "lastHeardMs" in entry ? entry.lastHeardMs : nowMs;
  return {
    id: entry.id,
    address: entry.address,
    capacity: entry.capacity,
    incarnation: entry.incarnation,
    status: TO_WIRE[entry.status],
    lastHeardMsAgo: Math.max(0, nowMs - lastHeardMs),
  };
}

/** A membership entry received on the wire, as the failure detector takes it. */
export function fromWireMember(member: Member): GossipEntry {
  return {
    id: member.id,
    address: member.address,
    capacity: member.capacity,
    incarnation: member.incarnation,
    status: FROM_WIRE[member.status],
  };
}
