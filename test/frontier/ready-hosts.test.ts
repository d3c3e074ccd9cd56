import { describe, expect, it } from "vitest";
import { queueClass, ReadyHosts } from "../../src/frontier/ready-hosts.js";

describe("queueClass", () => {
  it("is the power of two of the queue length, 0 for 0 and 1", () => {
    expect([0, 1, 2, 3, 4, 7, 8, 1023, 1024].map(queueClass)).toEqual([0, 0, 1, 1, 2, 2, 3, 9, 10]);
    expect(queueClass(2 ** 40)).toBe(30);
  });
});

describe("ReadyHosts", () => {
  it("hands out the longest class first, in arrival order within a class", () => {
    const ready = new ReadyHosts(64);
    ready.set("a", 3);
    ready.set("b", 100);
    ready.set("c", 2);
    ready.set("d", 127);
    ready.set("e", 1);
    expect(ready.size).toBe(5);
    expect(ready.longestClassFloor).toBe(64);
    expect([
      ready.shift(),
      ready.shift(),
      ready.shift(),
      ready.shift(),
      ready.shift(),
      ready.shift(),
    ]).toEqual(["b", "d", "a", "c", "e", undefined]);
    expect(ready.size).toBe(0);
    expect(ready.longestClassFloor).toBe(0);
  });

  it("moves a host to its new class, keeping its place when the class is the same", () => {
    const ready = new ReadyHosts(64);
    ready.set("a", 4);
    ready.set("b", 4);
    ready.set("a", 5);
    expect(ready.shift()).toBe("a");
    ready.set("c", 4);
    ready.set("b", 9);
    ready.set("c", 1);
    expect(ready.has("b")).toBe(true);
    expect([ready.shift(), ready.shift()]).toEqual(["b", "c"]);
    expect(ready.has("b")).toBe(false);
  });

  it("finds a lower class again after the top ones empty, and after clear holds nothing", () => {
    const ready = new ReadyHosts(64);
    ready.set("big", 5000);
    ready.set("small", 1);
    expect(ready.shift()).toBe("big");
    ready.set("mid", 20);
    expect(ready.longestClassFloor).toBe(16);
    expect([ready.shift(), ready.shift()]).toEqual(["mid", "small"]);
    ready.set("x", 8);
    ready.clear();
    expect(ready.size).toBe(0);
    expect(ready.shift()).toBeUndefined();
    ready.set("y", 2);
    expect(ready.shift()).toBe("y");
  });
});

describe("ReadyHosts: hosts not visited yet", () => {
  it("serves unvisited hosts before hosts known to hold about as many, in arrival order, whatever their queue", () => {
    const ready = new ReadyHosts(64);
    ready.set("long", 127);
    ready.addUnvisited("new1");
    ready.addUnvisited("new2");
    ready.set("new1", 2);
    // A host already in a class is not moved to the front.
    ready.addUnvisited("long");
    expect(ready.size).toBe(3);
    expect(ready.has("new2")).toBe(true);
    expect(ready.unvisitedHosts).toBe(2);
    expect(ready.longestClassFloor).toBe(64);
    expect([ready.shift(), ready.shift(), ready.shift(), ready.shift()]).toEqual([
      "new1",
      "new2",
      "long",
      undefined,
    ]);
    ready.addUnvisited("x");
    ready.clear();
    expect(ready.size).toBe(0);
  });

  it("serves a host known to hold more than twice an unvisited host's rank before the unvisited ones", () => {
    // Hosts keep being discovered all through a crawl: had they all gone first, the biggest host would
    // wait for a slot until nearly the end.
    const ready = new ReadyHosts(64);
    ready.addUnvisited("new1");
    ready.set("small", 3);
    ready.set("big", 6000);
    ready.set("long", 128);
    ready.addUnvisited("new2");
    expect([ready.shift(), ready.shift(), ready.shift(), ready.shift(), ready.shift()]).toEqual([
      "big",
      "long",
      "new1",
      "new2",
      "small",
    ]);
    // Once the long hosts are served, unvisited ones go first again, even with empty classes above.
    ready.set("big", 6000);
    ready.shift();
    ready.addUnvisited("new3");
    ready.set("small", 3);
    expect([ready.shift(), ready.shift(), ready.shift()]).toEqual(["new3", "small", undefined]);
  });
});
