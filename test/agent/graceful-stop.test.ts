import { afterEach, describe, expect, it } from "vitest";
import {
  crawlMetrics,
  listWarcFiles,
  readCrawlLogOf,
  servedPages,
  spawnAgent,
  startWebFixture,
  type WebFixture,
  waitFor,
} from "./harness.js";

let fixture: WebFixture | undefined;

afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

describe("stopping an agent with SIGTERM", () => {
  it("lets fetches in flight finish, keeps the state, and a restart completes the crawl with no repeat", async () => {
    fixture = await startWebFixture({ hosts: 30, pages: 2000, seed: 11, responseDelayMs: 5 });
    const truth = fixture.truth();
    const recorder = fixture.web.recorder;
    const flags = ["--max-active-hosts", "8"];
    // With --exit-when-done (the harness's default): a signal ends the wait for the crawl's end too.
    const first = spawnAgent(fixture, { id: "a1", flags });
    await waitFor(() => servedPages(recorder).size >= truth.urls.length * 0.3, "30% of the crawl", 60_000);
    first.kill("SIGTERM");
    const stopped = await first.waitForExit(30_000);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toMatch(/stopped \(terminated\)/);
    const servedAtStop = servedPages(recorder).size;
    expect(servedAtStop).toBeLessThan(truth.urls.length);
    // Every request the server answered before the stop is in the crawl log: none was cut off.
    const logged = (await readCrawlLogOf(`${fixture.dir}/data-a1`)).filter((entry) => entry.status > 0);
    expect(logged.length).toBe(servedAtStop);

    const second = spawnAgent(fixture, { id: "a1", flags });
    const done = await second.waitForExit(60_000);
    expect(done.code, done.stderr).toBe(0);
    const metrics = crawlMetrics(servedPages(recorder), truth.urls);
    expect(metrics.missing).toEqual([]);
    expect(metrics.repeated).toEqual([]);
  }, 120_000);

  it("keeps running while every visit sleeps out its politeness delay, and finishes its stop", async () => {
    fixture = await startWebFixture({ hosts: 10, pages: 300, seed: 5 });
    const recorder = fixture.web.recorder;
    // A 2 s delay: soon after the first pages every visit waits on a timer, with no request in flight.
    // No --exit-when-done: the agent runs until it is told to stop.
    const agent = spawnAgent(fixture, {
      id: "a2",
      delayMs: 2000,
      exitWhenDone: false,
      flags: ["--max-active-hosts", "4"],
    });
    // Running means not exited: an agent that ended by itself fails here at once, with its stderr.
    const served = (atLeast: number) => () => {
      if (agent.exited) throw new Error(`the agent exited by itself: ${JSON.stringify(agent.stderr())}`);
      return servedPages(recorder).size >= atLeast;
    };
    await waitFor(served(4), "the first pages", 30_000);
    await waitFor(served(servedPages(recorder).size + 4), "pages after the delays", 30_000);
    agent.kill("SIGTERM");
    const stopped = await agent.waitForExit(30_000);
    // The process stays up until the stop is done: it says so, and leaves no WARC file open.
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toMatch(/stopped \(terminated\)/);
    const files = await listWarcFiles(`${fixture.dir}/data-a2`);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((file) => file.endsWith(".open"))).toEqual([]);
  }, 60_000);
});
