/**
 * Structural validation of every protocol message, incoming requests on the server and replies on
 * the client. A peer may run other code (or be broken), so nothing it sends is trusted: each check
 * builds a fresh typed object or throws `UbiError(BadMessage)` naming the offending field.
 */

import { CHANGE_FREQUENCIES, type ChangeFrequency } from "../change-frequency.js";
import { ErrorCode, UbiError } from "../errors.js";
import { parseHostPort } from "./address.js";
import {
  AGENT_ID_PATTERN,
  MAX_ADDRESS_CHARS,
  MAX_BATCH_ID_CHARS,
  MAX_BLACKLIST_ENTRIES,
  MAX_BLACKLIST_PATTERN_CHARS,
  MAX_CONTROL_ARGUMENT_CHARS,
  MAX_DIGESTS_PER_MESSAGE,
  MAX_DONE_BYTES,
  MAX_ERROR_CLASSES,
  MAX_ETAG_CHARS,
  MAX_HOSTS_PER_HAND_OVER,
  MAX_ID_CHARS,
  MAX_IP_CHARS,
  MAX_IP_ENTRIES,
  MAX_MEMBERS,
  MAX_PAGE_SCHEDULE_BYTES,
  MAX_RECRAWL_BUDGET,
  MAX_REPLY_MESSAGE_CHARS,
  MAX_URL_CHARS,
  MAX_URLS_PER_BATCH,
  pageScheduleBytes,
} from "./limits.js";
import {
  type AgentControlOutcome,
  type AgentLoad,
  type AgentStats,
  type BlacklistEntry,
  type BlacklistRestored,
  type BlacklistSync,
  type BusyAddress,
  type ClaimReply,
  type ClaimRequest,
  CONTROL_ACTIONS,
  type ControlReply,
  type ControlRequest,
  DIGEST_STATES,
  type DigestCheck,
  type DigestSettleAck,
  type DigestSettlementMessage,
  type DigestSettlements,
  type DigestVerdictMessage,
  type DigestVerdicts,
  type DiscoveredUrl,
  HAND_OVER_STATUSES,
  type HandOverReply,
  type HandOverRequest,
  type HeartbeatReply,
  type HeartbeatRequest,
  type HostClaim,
  type HostHandOver,
  IP_GRANT_KINDS,
  type IpGrantMessage,
  type IpHandOffMessage,
  type IpHandOverMessage,
  type IpReply,
  type IpRequest,
  type JoinReply,
  type JoinRequest,
  MEMBER_STATUSES,
  type Member,
  type MemberFigures,
  type PageSchedule,
  type PayloadOriginalMessage,
  type PeerTraffic,
  type PeerView,
  type RevisitStats,
  type StatsReply,
  type StatsRequest,
  type UrlBatch,
  type UrlBatchAck,
  type WaitingHostsEntry,
} from "./messages.js";

const MAX_UINT32 = 0xffff_ffff;
/** Wait reasons in one agent's stats at most. */
const MAX_WAIT_REASONS = 64;
/** Busiest addresses in one agent's stats at most, and host names listed with each (agents send 10 and 3). */
const MAX_BUSY_IPS = 100;
const MAX_BUSY_HOST_NAMES = 16;
/** C0 controls and DEL never belong in URLs, batch ids or arguments. */
function hasControlChars(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function fail(path: string, reason: string): never {
  throw new UbiError(ErrorCode.BadMessage, `${path}: ${reason}`);
}

function record(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    fail(path, "missing or not a message");
  return value as Record<string, unknown>;
}

function text(value: unknown, path: string, maxChars: number, allowEmpty = false): string {
  if (typeof value !== "string") fail(path, "not a string");
  if (!allowEmpty && value.length === 0) fail(path, "empty");
  if (value.length > maxChars) fail(path, `longer than ${maxChars} chars`);
  return value;
}

function agentId(value: unknown, path: string): string {
  const id = text(value, path, MAX_ID_CHARS);
  if (!AGENT_ID_PATTERN.test(id)) fail(path, "agent ids use only [A-Za-z0-9._-]");
  return id;
}

function address(value: unknown, path: string): string {
  const addr = text(value, path, Number.MAX_SAFE_INTEGER);
  if (parseHostPort(addr) === undefined) fail(path, "not a host:port address");
  return addr;
}

function url(value: unknown, path: string): string {
  const u = text(value, path, MAX_URL_CHARS);
  if (hasControlChars(u)) fail(path, "control characters in URL");
  return u;
}

function uint32(value: unknown, path: string, min = 0): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > MAX_UINT32) {
    fail(path, `not an integer in [${min}, 2^32)`);
  }
  return value;
}

function uint64(value: unknown, path: string): number {
  // Decoded with `longs: Number`; values past 2^53 lost precision, so they are refused.
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    fail(path, "not a non-negative safe integer");
  }
  return value;
}

function double(value: unknown, path: string, max = Number.MAX_VALUE): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > max) {
    fail(path, `not a finite number in [0, ${max}]`);
  }
  return value;
}

function bool(value: unknown, path: string): boolean {
  if (typeof value !== "boolean") fail(path, "not a boolean");
  return value;
}

function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    fail(path, `not one of ${allowed.join(", ")}`);
  }
  return value as T;
}

function list<T>(value: unknown, path: string, maxItems: number, item: (v: unknown, p: string) => T): T[] {
  if (!Array.isArray(value)) fail(path, "not a list");
  if (value.length > maxItems) fail(path, `more than ${maxItems} items`);
  return value.map((v, i) => item(v, `${path}[${i}]`));
}

/** Validates a `Member`. */
export function validateMember(value: unknown, path = "member"): Member {
  const m = record(value, path);
  return {
    id: agentId(m.id, `${path}.id`),
    address: address(m.address, `${path}.address`),
    capacity: uint32(m.capacity, `${path}.capacity`, 1),
    incarnation: uint64(m.incarnation, `${path}.incarnation`),
    status: oneOf(m.status, `${path}.status`, MEMBER_STATUSES),
    lastHeardMsAgo: uint64(m.lastHeardMsAgo, `${path}.lastHeardMsAgo`),
  };
}

function members(value: unknown, path: string): Member[] {
  return list(value, path, MAX_MEMBERS, validateMember);
}

function agentLoad(value: unknown, path: string): AgentLoad {
  const l = record(value, path);
  return {
    idle: bool(l.idle, `${path}.idle`),
    urlBatchesSent: uint64(l.urlBatchesSent, `${path}.urlBatchesSent`),
    urlBatchesReceived: uint64(l.urlBatchesReceived, `${path}.urlBatchesReceived`),
    pagesFetched: uint64(l.pagesFetched, `${path}.pagesFetched`),
    queuedUrls: uint64(l.queuedUrls, `${path}.queuedUrls`),
    spareHostSlots: uint64(l.spareHostSlots, `${path}.spareHostSlots`),
    revisitPages: uint64(l.revisitPages, `${path}.revisitPages`),
    revisitBudget: double(l.revisitBudget, `${path}.revisitBudget`, MAX_RECRAWL_BUDGET),
  };
}

function memberFigures(value: unknown, path: string): MemberFigures {
  const f = record(value, path);
  return {
    id: agentId(f.id, `${path}.id`),
    pagesFetched: uint64(f.pagesFetched, `${path}.pagesFetched`),
    bytesFetched: uint64(f.bytesFetched, `${path}.bytesFetched`),
    pagesRecovered: uint64(f.pagesRecovered ?? 0, `${path}.pagesRecovered`),
    errors: errorCounts(f.errors ?? {}, `${path}.errors`),
  };
}

/** The `figures` of a heartbeat: absent (an agent that predates them) or one entry a member at most. */
function figures(value: unknown, path: string): { figures?: MemberFigures[] } {
  if (value === undefined) return {};
  const checked = list(value, path, MAX_MEMBERS, memberFigures);
  return checked.length === 0 ? {} : { figures: checked };
}

/** Validates a `JoinRequest`. */
export function validateJoinRequest(value: unknown): JoinRequest {
  const r = record(value, "JoinRequest");
  return { member: validateMember(r.member, "member") };
}

/** Validates a `JoinReply`. */
export function validateJoinReply(value: unknown): JoinReply {
  const r = record(value, "JoinReply");
  return { members: members(r.members, "members") };
}

/** Validates a `HeartbeatRequest`. */
export function validateHeartbeatRequest(value: unknown): HeartbeatRequest {
  const r = record(value, "HeartbeatRequest");
  return {
    from: validateMember(r.from, "from"),
    members: members(r.members, "members"),
    load: agentLoad(r.load, "load"),
    // An older agent's request lacks the field and decodes as false: such an agent always asks anyway.
    unanswered: bool(r.unanswered ?? false, "unanswered"),
    // An older agent's request lacks it (empty once decoded): such an agent partitions by host.
    ...(r.partitioning === undefined || r.partitioning === ""
      ? {}
      : { partitioning: oneOf(r.partitioning, "partitioning", ["host", "url"] as const) }),
    ...figures(r.figures, "figures"),
  };
}

/** Validates a `HeartbeatReply`. */
export function validateHeartbeatReply(value: unknown): HeartbeatReply {
  const r = record(value, "HeartbeatReply");
  return {
    members: members(r.members, "members"),
    load: agentLoad(r.load, "load"),
    from: validateMember(r.from, "from"),
    ...figures(r.figures, "figures"),
    // 0 is the field unset (an agent that predates it, or none).
    ...(r.previousIncarnation === undefined || r.previousIncarnation === 0
      ? {}
      : { previousIncarnation: uint64(r.previousIncarnation, "previousIncarnation") }),
  };
}

/**
 * The `sequence` of a message on a stream (`HeartbeatStream`, `DigestStream`; `message` names its type
 * in errors): at least 1, since 0 is what an unset field reads as. The rest of the message is checked
 * by the unary validators.
 */
export function validateSequence(value: unknown, message: string): number {
  const sequence = uint64(record(value, message).sequence, "sequence");
  if (sequence === 0) fail("sequence", "missing (0)");
  return sequence;
}

/** Longest host key accepted: a DNS name (253) and a port. */
const MAX_HOST_KEY_CHARS = 262;
/** A host key as `hostKey` makes them: a lower-case name or IP literal, and a port when not the default. */
const HOST_KEY = /^[a-z0-9._\-[\]:]+$/;

/** A host key that matches {@link HOST_KEY}: no control character, space, or any other character besides. */
function strictHostKey(value: unknown, path: string): string {
  const key = text(value, path, MAX_HOST_KEY_CHARS);
  if (!HOST_KEY.test(key)) fail(path, "not a host key");
  return key;
}

/** Longest `lastmod` accepted (a W3C datetime with fractions and zone is about 32 characters). */
const MAX_LASTMOD_CHARS = 64;

function discoveredUrl(value: unknown, path: string): DiscoveredUrl {
  const d = record(value, path);
  const attempts = d.attempts === undefined ? 0 : uint32(d.attempts, `${path}.attempts`);
  const sitemap = d.sitemap === undefined ? false : bool(d.sitemap, `${path}.sitemap`);
  const lastmod = d.lastmod === undefined ? "" : text(d.lastmod, `${path}.lastmod`, MAX_LASTMOD_CHARS, true);
  // Stored in the queue's compact entry form, whose fields a comma would break.
  if (hasControlChars(lastmod) || lastmod.includes(","))
    fail(`${path}.lastmod`, "holds a comma or a control character");
  const sitemapFor =
    d.sitemapFor === undefined || d.sitemapFor === ""
      ? ""
      : strictHostKey(d.sitemapFor, `${path}.sitemapFor`);
  const changefreq = changeFrequency(d.changefreq, `${path}.changefreq`);
  return {
    url: url(d.url, `${path}.url`),
    depth: uint32(d.depth, `${path}.depth`),
    ...(attempts > 0 ? { attempts } : {}),
    ...(sitemap ? { sitemap: true } : {}),
    ...(lastmod === "" ? {} : { lastmod }),
    ...(sitemapFor === "" ? {} : { sitemapFor }),
    ...(changefreq === "" ? {} : { changefreq }),
  };
}

/** A sitemap's changefreq as sent: one of sitemaps.org's values, exactly as they are written, or empty (absent: empty). */
function changeFrequency(value: unknown, path: string): ChangeFrequency | "" {
  return value === undefined || value === "" ? "" : oneOf(value, path, CHANGE_FREQUENCIES);
}

/** Validates a `UrlBatch`. */
export function validateUrlBatch(value: unknown): UrlBatch {
  const r = record(value, "UrlBatch");
  const batchId = text(r.batchId, "batchId", MAX_BATCH_ID_CHARS);
  if (hasControlChars(batchId)) fail("batchId", "control characters");
  return {
    batchId,
    fromId: agentId(r.fromId, "fromId"),
    urls: list(r.urls, "urls", MAX_URLS_PER_BATCH, discoveredUrl),
    ...(r.keepForOwners === undefined || !bool(r.keepForOwners, "keepForOwners")
      ? {}
      : { keepForOwners: true as const }),
  };
}

/** Validates a `UrlBatchAck`. */
export function validateUrlBatchAck(value: unknown): UrlBatchAck {
  const r = record(value, "UrlBatchAck");
  return {
    accepted: uint32(r.accepted, "accepted"),
    forwarded: uint32(r.forwarded, "forwarded"),
    duplicates: uint32(r.duplicates, "duplicates"),
    ...(r.kept === undefined || r.kept === 0 ? {} : { kept: uint32(r.kept, "kept") }),
  };
}

function hostKeyText(value: unknown, path: string): string {
  const host = text(value, path, MAX_ADDRESS_CHARS);
  if (hasControlChars(host) || /[\s/]/.test(host)) fail(path, "not a host key (name:port)");
  return host;
}

function hostClaim(value: unknown, path: string): HostClaim {
  const c = record(value, path);
  return {
    host: hostKeyText(c.host, `${path}.host`),
    skip: uint64(c.skip, `${path}.skip`),
    skipPages: c.skipPages === undefined ? 0 : uint64(c.skipPages, `${path}.skipPages`),
  };
}

/** Validates a `ClaimRequest`. */
export function validateClaimRequest(value: unknown): ClaimRequest {
  const r = record(value, "ClaimRequest");
  return {
    claimant: validateMember(r.claimant, "claimant"),
    hosts: list(r.hosts, "hosts", MAX_HOSTS_PER_HAND_OVER, hostClaim),
  };
}

/** Longest `Last-Modified`, WARC-Date or payload digest of a page history (a date is about 30). */
const MAX_PAGE_FIELD_CHARS = 64;
/** Longest WARC-Record-ID of a page history (`<urn:uuid:…>` is 47). */
const MAX_RECORD_ID_CHARS = 128;

/** Page histories of one host in a message at most: each weighs at least 64 bytes (`pageScheduleBytes`). */
const MAX_PAGES_PER_HOST = MAX_PAGE_SCHEDULE_BYTES / 64;

/** A header-like text of a page history: bounded, no control characters; empty allowed. */
function pageText(value: unknown, path: string, maxChars: number): string {
  const field = text(value ?? "", path, maxChars, true);
  if (hasControlChars(field)) fail(path, "control characters");
  return field;
}

function pageSchedule(value: unknown, path: string): PageSchedule {
  const p = record(value, path);
  const captureDigest = pageText(p.captureDigest, `${path}.captureDigest`, MAX_PAGE_FIELD_CHARS);
  const captured = captureDigest !== "";
  const captureUrl = captured ? url(p.captureUrl, `${path}.captureUrl`) : "";
  const captureDate = pageText(p.captureDate, `${path}.captureDate`, MAX_PAGE_FIELD_CHARS);
  const captureRecordId = pageText(p.captureRecordId, `${path}.captureRecordId`, MAX_RECORD_ID_CHARS);
  if (captured && (captureDate === "" || captureRecordId === "")) {
    fail(`${path}.captureDigest`, "a capture needs its date and record id");
  }
  if (!captured && (p.captureUrl || captureDate !== "" || captureRecordId !== "")) {
    fail(`${path}.captureDigest`, "empty, but other capture fields are set");
  }
  const visits = uint32(p.visits, `${path}.visits`);
  if (visits === 0) fail(`${path}.visits`, "a page history has at least one visit");
  const changes = uint32(p.changes, `${path}.changes`);
  if (changes >= visits) fail(`${path}.changes`, "more changes than visits after the first");
  return {
    url: url(p.url, `${path}.url`),
    depth: uint32(p.depth, `${path}.depth`),
    etag: pageText(p.etag, `${path}.etag`, MAX_ETAG_CHARS),
    lastModified: pageText(p.lastModified, `${path}.lastModified`, MAX_PAGE_FIELD_CHARS),
    captureDigest,
    captureUrl,
    captureDate,
    captureRecordId,
    visits,
    changes,
    observedMs: uint64(p.observedMs, `${path}.observedMs`),
    lastAtMs: uint64(p.lastAtMs, `${path}.lastAtMs`),
    nextAtMs: uint64(p.nextAtMs, `${path}.nextAtMs`),
    changefreq: changeFrequency(p.changefreq, `${path}.changefreq`),
  };
}

function hostHandOver(value: unknown, path: string): HostHandOver {
  const h = record(value, path);
  const status = oneOf(h.status, `${path}.status`, HAND_OVER_STATUSES);
  const needsHolder = status === "PASSED" || status === "NOT_YOURS";
  const holder =
    h.holder === null || h.holder === undefined ? null : validateMember(h.holder, `${path}.holder`);
  if (needsHolder && holder === null) fail(`${path}.holder`, `required when ${status}`);
  const done = h.done;
  if (!(done instanceof Uint8Array)) fail(`${path}.done`, "not bytes");
  if (done.length % 8 !== 0) fail(`${path}.done`, "not a whole number of 8-byte fingerprints");
  return {
    host: hostKeyText(h.host, `${path}.host`),
    status,
    holder,
    done,
    more: bool(h.more, `${path}.more`),
    pagesFetched: uint64(h.pagesFetched, `${path}.pagesFetched`),
    abandoned: text(h.abandoned, `${path}.abandoned`, MAX_REPLY_MESSAGE_CHARS, true),
    // Absent from an agent that predates the field.
    pages: h.pages === undefined ? [] : list(h.pages, `${path}.pages`, MAX_PAGES_PER_HOST, pageSchedule),
  };
}

function handOvers(value: unknown, path: string): HostHandOver[] {
  const hosts = list(value, path, MAX_HOSTS_PER_HAND_OVER, hostHandOver);
  let bytes = 0;
  let pageBytes = 0;
  for (const host of hosts) {
    bytes += host.done.length;
    for (const page of host.pages ?? []) pageBytes += pageScheduleBytes(page);
  }
  if (bytes > MAX_DONE_BYTES) fail(path, `more than ${MAX_DONE_BYTES} bytes of done fingerprints`);
  if (pageBytes > MAX_PAGE_SCHEDULE_BYTES) {
    fail(path, `more than ${MAX_PAGE_SCHEDULE_BYTES} bytes of page histories`);
  }
  return hosts;
}

/** Validates a `ClaimReply`. */
export function validateClaimReply(value: unknown): ClaimReply {
  const r = record(value, "ClaimReply");
  return { hosts: handOvers(r.hosts, "hosts") };
}

/** Validates a `HandOverRequest`. */
export function validateHandOverRequest(value: unknown): HandOverRequest {
  const r = record(value, "HandOverRequest");
  const hosts = handOvers(r.hosts, "hosts");
  for (const [i, host] of hosts.entries()) {
    if (host.status !== "GRANTED") fail(`hosts[${i}].status`, "a pushed hand-over is GRANTED");
  }
  return { from: validateMember(r.from, "from"), hosts };
}

/** Validates a `HandOverReply`. */
export function validateHandOverReply(value: unknown): HandOverReply {
  const r = record(value, "HandOverReply");
  return { taken: uint32(r.taken, "taken") };
}

/** Validates a `StatsRequest`. */
export function validateStatsRequest(value: unknown): StatsRequest {
  const r = record(value, "StatsRequest");
  return { cluster: bool(r.cluster, "cluster") };
}

function peerView(value: unknown, path: string): PeerView {
  const v = record(value, path);
  return {
    id: agentId(v.id, `${path}.id`),
    address: address(v.address, `${path}.address`),
    status: oneOf(v.status, `${path}.status`, MEMBER_STATUSES),
    lastHeardMsAgo: uint64(v.lastHeardMsAgo, `${path}.lastHeardMsAgo`),
  };
}

function peerTraffic(value: unknown, path: string): PeerTraffic {
  const t = record(value, path);
  return {
    peerId: agentId(t.peerId, `${path}.peerId`),
    urlsSent: uint64(t.urlsSent, `${path}.urlsSent`),
    urlsReceived: uint64(t.urlsReceived, `${path}.urlsReceived`),
    batchesSent: uint64(t.batchesSent, `${path}.batchesSent`),
    batchesReceived: uint64(t.batchesReceived, `${path}.batchesReceived`),
  };
}

function errorCounts(value: unknown, path: string): Record<string, number> {
  const entries = Object.entries(record(value, path));
  if (entries.length > MAX_ERROR_CLASSES) fail(path, `more than ${MAX_ERROR_CLASSES} error classes`);
  const counts: Record<string, number> = {};
  for (const [key, count] of entries) {
    counts[text(key, `${path} key`, MAX_ID_CHARS)] = uint64(count, `${path}[${key}]`);
  }
  return counts;
}

/** Validates one `AgentStats`. */
export function validateAgentStats(value: unknown, path = "stats"): AgentStats {
  const s = record(value, path);
  return {
    id: agentId(s.id, `${path}.id`),
    address: address(s.address, `${path}.address`),
    capacity: uint32(s.capacity, `${path}.capacity`),
    replicas: uint32(s.replicas, `${path}.replicas`),
    circleShare: double(s.circleShare, `${path}.circleShare`, 1),
    view: list(s.view, `${path}.view`, MAX_MEMBERS, peerView),
    hostsOwned: uint64(s.hostsOwned, `${path}.hostsOwned`),
    hostsKnown: uint64(s.hostsKnown, `${path}.hostsKnown`),
    hostsActive: uint64(s.hostsActive, `${path}.hostsActive`),
    hostsDone: uint64(s.hostsDone, `${path}.hostsDone`),
    pagesFetched: uint64(s.pagesFetched, `${path}.pagesFetched`),
    bytesFetched: uint64(s.bytesFetched, `${path}.bytesFetched`),
    queuedUrls: uint64(s.queuedUrls, `${path}.queuedUrls`),
    peers: list(s.peers, `${path}.peers`, MAX_MEMBERS, peerTraffic),
    communicationOverhead: double(s.communicationOverhead, `${path}.communicationOverhead`),
    linksToOtherAgents: uint64(s.linksToOtherAgents, `${path}.linksToOtherAgents`),
    pagesRecovered: uint64(s.pagesRecovered, `${path}.pagesRecovered`),
    errors: errorCounts(s.errors, `${path}.errors`),
    pagesPerSecond: double(s.pagesPerSecond, `${path}.pagesPerSecond`),
    uptimeMs: uint64(s.uptimeMs, `${path}.uptimeMs`),
    idle: bool(s.idle, `${path}.idle`),
    paused: bool(s.paused, `${path}.paused`),
    hostsHeld: uint64(s.hostsHeld, `${path}.hostsHeld`),
    heldFor: list(s.heldFor, `${path}.heldFor`, MAX_MEMBERS, agentId),
    pagesFetchedThisRun: uint64(s.pagesFetchedThisRun, `${path}.pagesFetchedThisRun`),
    // Unset by agents older than this field: they answer live.
    status:
      s.status === "MEMBER_STATUS_UNSPECIFIED" ? "ALIVE" : oneOf(s.status, `${path}.status`, MEMBER_STATUSES),
    reportedMsAgo: uint64(s.reportedMsAgo, `${path}.reportedMsAgo`),
    waiting: list(s.waiting, `${path}.waiting`, MAX_WAIT_REASONS, waitingHosts),
    duplicates: uint64(s.duplicates, `${path}.duplicates`),
    duplicateBytes: uint64(s.duplicateBytes, `${path}.duplicateBytes`),
    digestMessages: uint64(s.digestMessages, `${path}.digestMessages`),
    revisits: s.revisits == null ? null : revisitStats(s.revisits, `${path}.revisits`),
    payloadCopies: uint64(s.payloadCopies, `${path}.payloadCopies`),
    payloadsUnchecked: uint64(s.payloadsUnchecked, `${path}.payloadsUnchecked`),
    // Absent from an agent that predates the field.
    busiestIps:
      s.busiestIps === undefined ? [] : list(s.busiestIps, `${path}.busiestIps`, MAX_BUSY_IPS, busyAddress),
  };
}

function busyAddress(value: unknown, path: string): BusyAddress {
  const b = record(value, path);
  const hosts = uint64(b.hosts, `${path}.hosts`);
  const hostNames = list(b.hostNames, `${path}.hostNames`, MAX_BUSY_HOST_NAMES, strictHostKey);
  // A few of the hosts counted, so never more than those.
  if (hostNames.length > hosts)
    fail(`${path}.hostNames`, `more names (${hostNames.length}) than hosts (${hosts})`);
  return {
    ip: ipAddress(b.ip, `${path}.ip`),
    hosts,
    moreHosts: bool(b.moreHosts, `${path}.moreHosts`),
    hostNames,
    keeper: agentId(b.keeper, `${path}.keeper`),
    inFlight: uint32(b.inFlight, `${path}.inFlight`),
    waiting: uint32(b.waiting, `${path}.waiting`),
    startedRecently: uint64(b.startedRecently, `${path}.startedRecently`),
    started: uint64(b.started, `${path}.started`),
    meanWaitMsRecently: uint64(b.meanWaitMsRecently, `${path}.meanWaitMsRecently`),
    maxWaitMsRecently: uint64(b.maxWaitMsRecently, `${path}.maxWaitMsRecently`),
    waitedMs: uint64(b.waitedMs, `${path}.waitedMs`),
    refusalsRecently: uint64(b.refusalsRecently, `${path}.refusalsRecently`),
    refusals: uint64(b.refusals, `${path}.refusals`),
    line: uint32(b.line, `${path}.line`),
    blockedForMs: uint64(b.blockedForMs, `${path}.blockedForMs`),
    delayMs: uint64(b.delayMs, `${path}.delayMs`),
  };
}

function revisitStats(value: unknown, path: string): RevisitStats {
  const r = record(value, path);
  return {
    planned: uint64(r.planned, `${path}.planned`),
    queued: uint64(r.queued, `${path}.queued`),
    revisited: uint64(r.revisited, `${path}.revisited`),
    notModified: uint64(r.notModified, `${path}.notModified`),
    unchanged: uint64(r.unchanged, `${path}.unchanged`),
    changed: uint64(r.changed, `${path}.changed`),
    missed: uint64(r.missed, `${path}.missed`),
    overdueMs: uint64(r.overdueMs, `${path}.overdueMs`),
    // Absent from an agent that predates the field.
    received: r.received === undefined ? 0 : uint64(r.received, `${path}.received`),
    estimatedFreshness:
      r.estimatedFreshness === undefined ? 0 : double(r.estimatedFreshness, `${path}.estimatedFreshness`, 1),
    freshnessPages: r.freshnessPages === undefined ? 0 : uint64(r.freshnessPages, `${path}.freshnessPages`),
    budget: r.budget === undefined ? 0 : double(r.budget, `${path}.budget`, MAX_RECRAWL_BUDGET * MAX_MEMBERS),
    budgetPages: r.budgetPages === undefined ? 0 : uint64(r.budgetPages, `${path}.budgetPages`),
  };
}

function waitingHosts(value: unknown, path: string): WaitingHostsEntry {
  const w = record(value, path);
  return {
    reason: text(w.reason, `${path}.reason`, MAX_ID_CHARS),
    hosts: uint64(w.hosts, `${path}.hosts`),
    nextInMs: uint64(w.nextInMs, `${path}.nextInMs`),
  };
}

/** Validates a `StatsReply`. */
export function validateStatsReply(value: unknown): StatsReply {
  const r = record(value, "StatsReply");
  return { agents: list(r.agents, "agents", MAX_MEMBERS, validateAgentStats) };
}

/** Validates a `ControlRequest`. */
export function validateControlRequest(value: unknown): ControlRequest {
  const r = record(value, "ControlRequest");
  const action = oneOf(r.action, "action", CONTROL_ACTIONS);
  const needsArgument = action === "BLACKLIST_ADD" || action === "BLACKLIST_REMOVE" || action === "SET";
  const argument = text(r.argument, "argument", MAX_CONTROL_ARGUMENT_CHARS, !needsArgument);
  if (hasControlChars(argument)) fail("argument", "control characters");
  const urls = list(r.urls ?? [], "urls", MAX_URLS_PER_BATCH, url);
  if (action === "ADD_SEEDS" && urls.length === 0) fail("urls", "ADD_SEEDS needs at least one URL");
  if (action !== "ADD_SEEDS" && urls.length > 0) fail("urls", `not taken by ${action}`);
  // Absent from an agent or a ctl that predates it (false once decoded): this agent only.
  const cluster = bool(r.cluster ?? false, "cluster");
  if (cluster && action === "ADD_SEEDS") fail("cluster", "not taken by ADD_SEEDS");
  const force = bool(r.force ?? false, "force");
  const relayed = bool(r.relayed ?? false, "relayed");
  if ((force || relayed) && action !== "ADD_SEEDS")
    fail(force ? "force" : "relayed", `not taken by ${action}`);
  return {
    action,
    argument,
    urls,
    ...(cluster ? { cluster } : {}),
    ...(force ? { force } : {}),
    ...(relayed ? { relayed } : {}),
  };
}

function controlOutcome(value: unknown, path: string): AgentControlOutcome {
  const r = record(value, path);
  return {
    id: agentId(r.id, `${path}.id`),
    address: address(r.address, `${path}.address`),
    ok: bool(r.ok, `${path}.ok`),
    message: text(r.message, `${path}.message`, MAX_REPLY_MESSAGE_CHARS, true),
  };
}

/** Validates a `ControlReply`. */
export function validateControlReply(value: unknown): ControlReply {
  const r = record(value, "ControlReply");
  const agents = list(r.agents ?? [], "agents", MAX_MEMBERS, controlOutcome);
  return {
    ok: bool(r.ok, "ok"),
    message: text(r.message, "message", MAX_REPLY_MESSAGE_CHARS, true),
    ...(agents.length > 0 ? { agents } : {}),
  };
}

function blacklistEntry(value: unknown, path: string): BlacklistEntry {
  const r = record(value, path);
  const pattern = text(r.pattern, `${path}.pattern`, MAX_BLACKLIST_PATTERN_CHARS);
  if (hasControlChars(pattern)) fail(`${path}.pattern`, "control characters");
  return {
    pattern,
    blocked: bool(r.blocked, `${path}.blocked`),
    changedAtMs: uint64(r.changedAtMs, `${path}.changedAtMs`),
    changedBy: agentId(r.changedBy, `${path}.changedBy`),
  };
}

/** Validates a `BlacklistSync` (request and reply of `SyncBlacklist`). */
export function validateBlacklistSync(value: unknown): BlacklistSync {
  const r = record(value, "BlacklistSync");
  const entries = list(r.entries ?? [], "entries", MAX_BLACKLIST_ENTRIES, blacklistEntry);
  // Absent from a request, from a reply that restored nothing, and from an agent that predates it.
  if (r.restored === undefined || r.restored === null) return { entries };
  const restored = record(r.restored, "restored");
  const count = (name: keyof BlacklistRestored) => uint32(restored[name] ?? 0, `restored.${name}`);
  return {
    entries,
    restored: {
      hosts: count("hosts"),
      queuedHere: count("queuedHere"),
      sentToOwners: count("sentToOwners"),
      outOfLimits: count("outOfLimits"),
      doneMeanwhile: count("doneMeanwhile"),
      beyondCap: count("beyondCap"),
    },
  };
}

/** A payload digest as WARC writes it: `sha1:` and 32 base32 characters. */
const DIGEST_PATTERN = /^sha1:[A-Z2-7]{32}$/;
/** A WARC-Date as written (ISO 8601, UTC, optional fraction). */
const WARC_DATE_PATTERN = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;
/** A WARC-Record-ID as written. */
const RECORD_ID_PATTERN = /^<urn:uuid:[0-9a-f-]{36}>$/;

function digest(value: unknown, path: string): string {
  const d = text(value, path, 40);
  if (!DIGEST_PATTERN.test(d)) fail(path, "not a sha1: base32 digest");
  return d;
}

function payloadOriginal(value: unknown, path: string): PayloadOriginalMessage {
  const r = record(value, path);
  const date = text(r.date, `${path}.date`, 40);
  if (!WARC_DATE_PATTERN.test(date)) fail(`${path}.date`, "not an ISO 8601 UTC date");
  const recordId = text(r.recordId, `${path}.recordId`, 60);
  if (!RECORD_ID_PATTERN.test(recordId)) fail(`${path}.recordId`, "not a <urn:uuid:…> record id");
  return { url: url(r.url, `${path}.url`), date, recordId };
}

/** Validates a `DigestCheck` (`CheckDigests` request). */
export function validateDigestCheck(value: unknown): DigestCheck {
  const r = record(value, "DigestCheck");
  return {
    fromId: agentId(r.fromId, "fromId"),
    digests: list(r.digests, "digests", MAX_DIGESTS_PER_MESSAGE, digest),
    settlements: list(r.settlements ?? [], "settlements", MAX_DIGESTS_PER_MESSAGE, digestSettlement),
    fromIncarnation: uint64(r.fromIncarnation ?? 0, "fromIncarnation"),
  };
}

function digestVerdict(value: unknown, path: string): DigestVerdictMessage {
  const r = record(value, path);
  const state = oneOf(r.state, `${path}.state`, DIGEST_STATES);
  if (state !== "DIGEST_SEEN") {
    if (r.original !== null && r.original !== undefined) fail(`${path}.original`, `not taken with ${state}`);
    return { state, original: null };
  }
  return { state, original: payloadOriginal(r.original, `${path}.original`) };
}

/** Validates a `DigestVerdicts` (`CheckDigests` reply). */
export function validateDigestVerdicts(value: unknown): DigestVerdicts {
  const r = record(value, "DigestVerdicts");
  return { verdicts: list(r.verdicts, "verdicts", MAX_DIGESTS_PER_MESSAGE, digestVerdict) };
}

function digestSettlement(value: unknown, path: string): DigestSettlementMessage {
  const r = record(value, path);
  return {
    digest: digest(r.digest, `${path}.digest`),
    original:
      r.original === null || r.original === undefined
        ? null
        : payloadOriginal(r.original, `${path}.original`),
  };
}

/** Validates a `DigestSettlements` (`SettleDigests` request). */
export function validateDigestSettlements(value: unknown): DigestSettlements {
  const r = record(value, "DigestSettlements");
  return {
    fromId: agentId(r.fromId, "fromId"),
    settlements: list(r.settlements, "settlements", MAX_DIGESTS_PER_MESSAGE, digestSettlement),
  };
}

/** Validates a `DigestSettleAck`. */
export function validateDigestSettleAck(value: unknown): DigestSettleAck {
  record(value, "DigestSettleAck");
  return {};
}

/** An IP address: IPv4 dotted quads or IPv6 text (hex digits, colons, dots; a zone is not taken). */
function ipAddress(value: unknown, path: string): string {
  const ip = text(value, path, MAX_IP_CHARS);
  if (!/^[0-9A-Fa-f:.]+$/.test(ip)) fail(path, "not an IP address");
  return ip;
}

/** Validates an `IpRequest` (`IpGrants` request). */
export function validateIpRequest(value: unknown): IpRequest {
  const r = record(value, "IpRequest");
  return {
    fromId: agentId(r.fromId, "fromId"),
    releases: list(r.releases, "releases", MAX_IP_ENTRIES, (v, p) => {
      const e = record(v, p);
      return {
        ip: ipAddress(e.ip, `${p}.ip`),
        slotIds: list(e.slotIds, `${p}.slotIds`, MAX_IP_ENTRIES, uint64),
        leaseSlots: uint32(e.leaseSlots, `${p}.leaseSlots`),
        ...((e.agentId ?? "") === "" ? {} : { agentId: agentId(e.agentId, `${p}.agentId`) }),
        ...((e.hops ?? 0) === 0 ? {} : { hops: uint32(e.hops, `${p}.hops`) }),
        ...((e.leaseId ?? 0) === 0 ? {} : { leaseId: uint64(e.leaseId, `${p}.leaseId`) }),
      };
    }),
    refusals: list(r.refusals, "refusals", MAX_IP_ENTRIES, (v, p) => {
      const e = record(v, p);
      return {
        ip: ipAddress(e.ip, `${p}.ip`),
        retryAfterMs: uint64(e.retryAfterMs, `${p}.retryAfterMs`),
        hasRetryAfter: bool(e.hasRetryAfter, `${p}.hasRetryAfter`),
      };
    }),
    asks: list(r.asks, "asks", MAX_IP_ENTRIES, (v, p) => {
      const e = record(v, p);
      return {
        ip: ipAddress(e.ip, `${p}.ip`),
        renew: bool(e.renew, `${p}.renew`),
        holdMs: uint32(e.holdMs ?? 0, `${p}.holdMs`),
        startSlackMs: uint32(e.startSlackMs ?? 0, `${p}.startSlackMs`),
      };
    }),
    takeOver: list(r.takeOver ?? [], "takeOver", MAX_IP_ENTRIES, ipAddress),
    crawlDelays: list(r.crawlDelays ?? [], "crawlDelays", MAX_IP_ENTRIES, (v, p) => {
      const e = record(v, p);
      return { ip: ipAddress(e.ip, `${p}.ip`), delayMs: uint64(e.delayMs, `${p}.delayMs`) };
    }),
    handedOff: list(r.handedOff ?? [], "handedOff", MAX_IP_ENTRIES, ipHandOff),
    handedBack: list(r.handedBack ?? [], "handedBack", MAX_IP_ENTRIES, ipHandOff),
    leaving: bool(r.leaving ?? false, "leaving"),
    view: list(r.view ?? [], "view", MAX_MEMBERS, agentId),
    ...((r.goneAuthority ?? "") === ""
      ? {}
      : {
          goneAuthority: agentId(r.goneAuthority, "goneAuthority"),
          holdings: list(r.holdings ?? [], "holdings", MAX_IP_ENTRIES, (v, p) => {
            const e = record(v, p);
            return {
              ip: ipAddress(e.ip, `${p}.ip`),
              state: ipHandOver(e.state, `${p}.state`),
              leasedByGone: bool(e.leasedByGone ?? false, `${p}.leasedByGone`),
            };
          }),
          holdingsLast: bool(r.holdingsLast ?? false, "holdingsLast"),
        }),
  };
}

function ipHandOver(value: unknown, path: string): IpHandOverMessage {
  const h = record(value, path);
  return {
    held: list(h.held, `${path}.held`, MAX_IP_ENTRIES, (v, p) => {
      const e = record(v, p);
      return {
        agentId: agentId(e.agentId, `${p}.agentId`),
        count: uint32(e.count, `${p}.count`),
        startsForMs: uint64(e.startsForMs ?? 0, `${p}.startsForMs`),
        hasStartsFor: bool(e.hasStartsFor ?? false, `${p}.hasStartsFor`),
      };
    }),
    untilMs: uint64(h.untilMs, `${path}.untilMs`),
    blockedForMs: uint64(h.blockedForMs, `${path}.blockedForMs`),
    spacedForMs: uint64(h.spacedForMs, `${path}.spacedForMs`),
    holdForMs: uint64(h.holdForMs ?? 0, `${path}.holdForMs`),
  };
}

function ipHandOff(value: unknown, path: string): IpHandOffMessage {
  const e = record(value, path);
  return { ip: ipAddress(e.ip, `${path}.ip`), state: ipHandOver(e.state, `${path}.state`) };
}

function ipGrant(value: unknown, path: string): IpGrantMessage {
  const g = record(value, path);
  return {
    kind: oneOf(g.kind, `${path}.kind`, IP_GRANT_KINDS),
    slotId: uint64(g.slotId, `${path}.slotId`),
    ttlMs: uint64(g.ttlMs, `${path}.ttlMs`),
    waitMs: uint64(g.waitMs, `${path}.waitMs`),
    blockedForMs: uint64(g.blockedForMs, `${path}.blockedForMs`),
    delayMs: uint64(g.delayMs, `${path}.delayMs`),
    heldMs: uint64(g.heldMs ?? 0, `${path}.heldMs`),
    startSlackMs: uint32(g.startSlackMs ?? 0, `${path}.startSlackMs`),
    leaseId: uint64(g.leaseId ?? 0, `${path}.leaseId`),
  };
}

/** Validates an `IpReply` (`IpGrants` reply). */
export function validateIpReply(value: unknown): IpReply {
  const r = record(value, "IpReply");
  return {
    grants: list(r.grants, "grants", MAX_IP_ENTRIES, ipGrant),
    handedOver: list(r.handedOver ?? [], "handedOver", MAX_IP_ENTRIES, ipHandOver),
  };
}
