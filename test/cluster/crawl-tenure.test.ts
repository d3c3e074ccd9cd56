import { expect, it } from "vitest";
import { CrawlTenure } from "../../src/cluster/crawl-tenure.js";

it("tells each pass of a host's crawl, so the URLs still waiting here for it stop waiting", () => {
  let passes = 0;
  const tenure = new CrawlTenure(() => passes++);
  tenure.take("a.test");
  expect(passes).toBe(0);
  tenure.pass("a.test", "agent-2");
  expect(passes).toBe(1);
  expect(tenure.holds("a.test")).toBe(false);
  expect(tenure.passedTo("a.test")).toBe("agent-2");
});
