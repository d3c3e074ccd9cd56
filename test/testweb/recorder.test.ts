import { expect, it } from "vitest";
import { ServedRecorder } from "../../src/testweb/recorder.js";

it("records the gaps between request starts per address, whichever hosts they are for, until a reset", () => {
  let nowMs = 0;
  const recorder = new ServedRecorder({ now: () => nowMs });
  const at = (ms: number, host: string, ip: string) => {
    nowMs = ms;
    return recorder.begin(host, ip, `http://${host}:80/`);
  };
  const first = at(0, "a.test", "127.1.0.1");
  at(30, "b.test", "127.1.0.1");
  at(35, "c.test", "127.1.0.2");
  recorder.end(first, 200);
  at(40, "a.test", "127.1.0.1");
  expect(recorder.gapsAtIp("127.1.0.1")).toEqual([30, 10]);
  expect(recorder.minGapAtIp("127.1.0.1")).toBe(10);
  expect(recorder.gapsAtIp("127.1.0.2")).toEqual([]);
  expect(recorder.maxConcurrencyAtIp("127.1.0.1")).toBe(2);
  recorder.reset();
  expect(recorder.gapsAtIp("127.1.0.1")).toEqual([]);
  // A gap across the reset is still a gap between two starts.
  at(100, "b.test", "127.1.0.1");
  expect(recorder.gapsAtIp("127.1.0.1")).toEqual([60]);
});
