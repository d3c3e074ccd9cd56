import { beforeAll, describe, expect, it } from "vitest";
import { Ownership, PageRecovery, type PageRecoveryOptions } from "../../src/cluster/index.js";
import { ErrorCode, UbiError } from "../../src/errors.js";
import { loadHasher64 } from "../../src/hashing/index.js";

/**
 * Agent "a" joined a running crawl of "b" and "c": for the hosts it owns, its successors on the circle
 * (`first`, then `second`) are the previous owners page recovery asks, in that order.
 */
let ownership: Ownership;
let host: string;
let first: string;
let second: string;

beforeAll(async () => {
  ownership = new Ownership("a", 1, 64, await loadHasher64());
  ownership.update([{ id: "a" }, { id: "b" }, { id: "c" }]);
  ownership.markJoinedRunningCrawl();
  host =
    Array.from({ length: 100 }, (_, i) => `site${i}.example:80`).find(
      (candidate) => ownership.ownerOf(candidate) === "a",
    ) ?? "";
  expect(host).not.toBe("");
  [first = "", second = ""] = ownership.previousOwners(host, 2, () => true);
  expect(new Set([first, second])).toEqual(new Set(["b", "c"]));
});

const page = (n: number) => `http://${host}/p${n}`;

/** A fake `ask`: each peer knows a set of fetched URLs (or is unreachable); every question is logged. */
function fakePeers(fetched: Record<string, readonly string[] | "unreachable">) {
  const questions: { peer: string; urls: string[] }[] = [];
  const ask = async (peer: string, urls: readonly string[]): Promise<boolean[]> => {
    questions.push({ peer, urls: [...urls] });
    const known = fetched[peer];
    if (known === "unreachable" || known === undefined) {
      throw new UbiError(ErrorCode.PeerUnreachable, `${peer} is down`);
    }
    return urls.map((url) => known.includes(url));
  };
  return { ask, questions };
}

function recovery(
  ask: (peer: string, urls: readonly string[]) => Promise<boolean[]>,
  options: PageRecoveryOptions = {},
) {
  return new PageRecovery(options, { ownership, isAlive: () => true, ask });
}

describe("PageRecovery", () => {
  it("asks about the page and the upcoming ones in one question, then answers from the cache", async () => {
    const peers = fakePeers({ [first]: [page(1), page(3)], [second]: [] });
    const recover = recovery(peers.ask);
    const upcoming = [page(2), page(3), page(4)];
    expect(await recover.fetchedElsewhere(host, page(1), () => upcoming)).toBe(true);
    expect(peers.questions[0]).toEqual({ peer: first, urls: [page(1), page(2), page(3), page(4)] });
    const asked = peers.questions.length;
    expect(await recover.fetchedElsewhere(host, page(2), () => [page(3), page(4)])).toBe(false);
    expect(await recover.fetchedElsewhere(host, page(3), () => [page(4)])).toBe(true);
    expect(await recover.fetchedElsewhere(host, page(4), () => [])).toBe(false);
    // Later pages were answered from the first batch: no further question.
    expect(peers.questions.length).toBe(asked);
    // Each cached answer is used once: asking again goes back to the peers.
    expect(await recover.fetchedElsewhere(host, page(3), () => [])).toBe(true);
    expect(peers.questions.length).toBeGreaterThan(asked);
  });

  it("asks the second owner only about the URLs the first said no to", async () => {
    const peers = fakePeers({ [first]: [page(1)], [second]: [page(2), page(1)] });
    const recover = recovery(peers.ask);
    expect(await recover.fetchedElsewhere(host, page(1), () => [page(2), page(3)])).toBe(true);
    expect(peers.questions).toEqual([
      { peer: first, urls: [page(1), page(2), page(3)] },
      { peer: second, urls: [page(2), page(3)] },
    ]);
    expect(await recover.fetchedElsewhere(host, page(2), () => [page(3)])).toBe(true);
    expect(await recover.fetchedElsewhere(host, page(3), () => [])).toBe(false);
    expect(peers.questions).toHaveLength(2);
  });

  it("does not ask the second owner when the first had every page", async () => {
    const peers = fakePeers({ [first]: [page(1), page(2)], [second]: [page(1), page(2)] });
    const recover = recovery(peers.ask);
    expect(await recover.fetchedElsewhere(host, page(1), () => [page(2)])).toBe(true);
    expect(peers.questions.map((question) => question.peer)).toEqual([first]);
  });

  it("treats an unreachable owner as 'not fetched' and still asks the next one", async () => {
    const peers = fakePeers({ [first]: "unreachable", [second]: [page(2)] });
    const recover = recovery(peers.ask);
    expect(await recover.fetchedElsewhere(host, page(1), () => [page(2)])).toBe(false);
    expect(peers.questions.map((question) => question.peer)).toEqual([first, second]);
    expect(await recover.fetchedElsewhere(host, page(2), () => [])).toBe(true);

    const allDown = fakePeers({ [first]: "unreachable", [second]: "unreachable" });
    expect(await recovery(allDown.ask).fetchedElsewhere(host, page(1), () => [])).toBe(false);
    expect(allDown.questions).toHaveLength(2);
  });

  it("never asks with k = 0, nor when no previous owner is alive", async () => {
    const peers = fakePeers({ [first]: [page(1)], [second]: [page(1)] });
    expect(await recovery(peers.ask, { k: 0 }).fetchedElsewhere(host, page(1), () => [page(2)])).toBe(false);
    const dead = new PageRecovery({}, { ownership, isAlive: () => false, ask: peers.ask });
    expect(await dead.fetchedElsewhere(host, page(1), () => [])).toBe(false);
    expect(peers.questions).toEqual([]);
  });

  it("with k = 1 asks only the first previous owner", async () => {
    const peers = fakePeers({ [first]: [], [second]: [page(1)] });
    expect(await recovery(peers.ask, { k: 1 }).fetchedElsewhere(host, page(1), () => [])).toBe(false);
    expect(peers.questions.map((question) => question.peer)).toEqual([first]);
  });

  it("caps a question at batchSize URLs and skips the page itself among the upcoming ones", async () => {
    const peers = fakePeers({ [first]: [], [second]: [] });
    const upcoming = [page(1), ...Array.from({ length: 10 }, (_, i) => page(10 + i))];
    await recovery(peers.ask, { batchSize: 4 }).fetchedElsewhere(host, page(1), () => upcoming);
    expect(peers.questions[0]?.urls).toEqual([page(1), page(10), page(11), page(12)]);
  });

  it("reset() forgets the cached answers", async () => {
    const peers = fakePeers({ [first]: [page(2)], [second]: [] });
    const recover = recovery(peers.ask);
    await recover.fetchedElsewhere(host, page(1), () => [page(2)]);
    const asked = peers.questions.length;
    recover.reset();
    expect(await recover.fetchedElsewhere(host, page(2), () => [])).toBe(true);
    expect(peers.questions.length).toBeGreaterThan(asked);
    expect(peers.questions.at(-1)?.urls).toEqual([page(2)]);
  });
});
