/**
 * Host hand-overs in one process: the real HostClaims, HandOverDesk, CrawlTenure and Ownership of each
 * simulated agent; its view, its requests in flight and the wire between agents are in the test's
 * hands, so the order of every message can be chosen.
 */
import { systemClock } from "../../src/clock.js";
import { CrawlTenure } from "../../src/cluster/crawl-tenure.js";
import { HandOverDesk } from "../../src/cluster/hand-over.js";
import { HostClaims } from "../../src/cluster/host-claims.js";
import { fromWireMember, toWireMember } from "../../src/cluster/members.js";
import { Ownership } from "../../src/cluster/ownership.js";
import type { MemberEntry } from "../../src/failure-detector/index.js";
import { type Hasher64, loadHasher64 } from "../../src/hashing/index.js";
import type { ClaimReply, ClaimRequest, HandOverReply, HandOverRequest } from "../../src/transport/index.js";

/** One simulated agent: the hand-over parts of an agent over a fake view and a fake wire. */
export class SimAgent {
  readonly tenure = new CrawlTenure();
  readonly ownership: Ownership;
  readonly alive = new Set<string>();
  readonly known = new Map<string, MemberEntry>();
  readonly desk: HandOverDesk;
  readonly claims: HostClaims;
  /** host -> promise that ends the "flight" quiesce waits for */
  readonly flights = new Map<string, Promise<void>>();
  readonly log: string[] = [];
  constructor(
    readonly id: string,
    hasher: Hasher64,
    readonly net: Map<string, SimAgent>,
    recoveryK = 16,
  ) {
    this.ownership = new Ownership(id, 1, 64, hasher);
    this.addAlive(id);
    const agent = {
      quiesce: async (host: string, maxWaitMs: number) => {
        const f = this.flights.get(host);
        if (!f) return true;
        return Promise.race([
          f.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), maxWaitMs)),
        ]);
      },
      doneOf: async () => [] as bigint[],
      hostRecord: () => ({ pagesFetched: 0 }),
      adopt: () => {},
      commit: async () => {},
      historiesOf: async function* () {},
      adoptHistories: async () => {},
      releaseHistories: async () => {},
    };
    this.desk = new HandOverDesk({
      selfId: id,
      clock: systemClock,
      tenure: this.tenure,
      ownership: this.ownership,
      agent,
      memberOf: (x) => this.known.get(x),
      heardFrom: (m) => this.addAlive(m.id, m.status),
    });
    this.claims = new HostClaims(
      { maxAsked: recoveryK },
      {
        selfId: id,
        clock: systemClock,
        tenure: this.tenure,
        ownership: this.ownership,
        isAlive: (x) => this.alive.has(x),
        hasLeft: (m) => this.known.get(m.id)?.status === "left",
        self: () => toWireMember(this.known.get(id) as MemberEntry, Date.now()),
        claim: async (peer, request) => this.send(peer, request),
        learnOf: (m) => {
          const e = fromWireMember(m);
          if (!this.known.has(e.id)) this.known.set(e.id, { ...e, status: "suspected", lastHeardMs: 0 });
        },
        desk: this.desk,
        agent,
      },
    );
  }
  entry(id: string, status: MemberEntry["status"] = "alive"): MemberEntry {
    return { id, address: `addr-${id}`, capacity: 1, incarnation: 1, status, lastHeardMs: Date.now() };
  }
  addAlive(id: string, status: MemberEntry["status"] = "alive"): void {
    this.known.set(id, this.entry(id, status));
    if (status === "alive") this.alive.add(id);
    else this.alive.delete(id);
    this.ownership.update([...this.alive].map((x) => ({ id: x, capacity: 1 })));
  }
  remove(id: string, status: MemberEntry["status"] = "suspected"): void {
    this.known.set(id, this.entry(id, status));
    this.alive.delete(id);
    this.ownership.update([...this.alive].map((x) => ({ id: x, capacity: 1 })));
  }
  async send(peer: string, request: ClaimRequest): Promise<ClaimReply> {
    const target = this.net.get(peer);
    if (!target) throw new Error(`unreachable ${peer}`);
    this.log.push(`${this.id} -> ${peer}: claim ${request.hosts.map((h) => h.host).join(",")}`);
    const reply = await target.desk.answer(structuredClone(request));
    this.log.push(
      `${peer} -> ${this.id}: ${reply.hosts.map((h) => `${h.host}=${h.status}${h.holder ? `(${h.holder.id})` : ""}`).join(",")}`,
    );
    return reply;
  }
  push(peer: string, request: HandOverRequest): Promise<HandOverReply> {
    const target = this.net.get(peer);
    if (!target) return Promise.reject(new Error(`unreachable ${peer}`));
    this.log.push(`${this.id} -> ${peer}: push ${request.hosts.map((h) => h.host).join(",")}`);
    return target.desk.takeIn(structuredClone(request));
  }
}

/** The hasher agents use. */
export async function hasher(): Promise<Hasher64> {
  return loadHasher64();
}

/** Order of owners from `host` for a set of ids (owner first). */
export function circleOrder(o: Ownership, host: string): string[] {
  return [o.ownerOf(host), ...o.assignment.successors(host, o.assignment.agents.length)];
}
