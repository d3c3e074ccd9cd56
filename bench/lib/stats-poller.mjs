// Polls the agents of a local cluster for their stats over gRPC (the same `GetStats` call as
// `ubicrawl stats --json`), keeping each agent's latest answer: the agents exit with --exit-when-done,
// so the last answer before an agent leaves holds its final exchange counters.
import { INSECURE, PeerClient } from "../../dist/transport/index.js";

/** Latest stats of each agent, refreshed every `intervalMs` while the agent answers. */
export class StatsPoller {
  /** @param {number} intervalMs */
  constructor(intervalMs = 1000) {
    /** @type {Map<string, PeerClient>} client by agent id */
    this.clients = new Map();
    /** @type {Map<string, import("../../dist/transport/index.js").AgentStats>} latest stats by agent id */
    this.latest = new Map();
    this.polling = false;
    this.timer = setInterval(() => this.poll(), intervalMs);
  }

  /**
   * Starts polling the agent `id` at `address`.
   * @param {string} id
   * @param {string} address
   */
  watch(id, address) {
    this.clients.set(id, new PeerClient(address, { security: INSECURE, requestDeadlineMs: 2000 }));
  }

  /** Stops polling `id` (it exited) and closes its client. @param {string} id */
  forget(id) {
    this.clients.get(id)?.close();
    this.clients.delete(id);
  }

  /** One round over every watched agent; an agent that does not answer keeps its previous stats. */
  async poll() {
    if (this.polling) return;
    this.polling = true;
    try {
      await Promise.all(
        [...this.clients].map(async ([id, client]) => {
          try {
            const reply = await client.getStats({ cluster: false });
            const own = reply.agents.find((agent) => agent.id === id);
            if (own) this.latest.set(id, own);
          } catch {
            // exiting or busy: keep the last answer
          }
        }),
      );
    } finally {
      this.polling = false;
    }
  }

  /**
   * Ids of the agents `id` regards as alive, itself included (empty when it does not answer).
   * @param {string} id
   */
  async aliveView(id) {
    const client = this.clients.get(id);
    if (!client) return new Set();
    try {
      const reply = await client.getStats({ cluster: false });
      const own = reply.agents.find((agent) => agent.id === id);
      return new Set([
        id,
        ...(own?.view ?? []).filter((peer) => peer.status === "ALIVE").map((peer) => peer.id),
      ]);
    } catch {
      return new Set();
    }
  }

  /** Sums of the latest stats over every agent seen. */
  totals() {
    let pagesFetched = 0;
    let urlsSent = 0;
    let batchesSent = 0;
    let urlsReceived = 0;
    for (const stats of this.latest.values()) {
      pagesFetched += stats.pagesFetched;
      for (const peer of stats.peers) {
        urlsSent += peer.urlsSent;
        batchesSent += peer.batchesSent;
        urlsReceived += peer.urlsReceived;
      }
    }
    return { agents: this.latest.size, pagesFetched, urlsSent, urlsReceived, batchesSent };
  }

  /** Stops polling and closes every client. */
  stop() {
    clearInterval(this.timer);
    for (const id of [...this.clients.keys()]) this.forget(id);
  }
}
