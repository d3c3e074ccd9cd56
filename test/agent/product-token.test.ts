import { describe, expect, it } from "vitest";
import { AGENT_DEFAULTS, productToken } from "../../src/agent/agent-options.js";

describe("productToken", () => {
  it("is the name of the User-Agent's first product, before its version or comment, lowercased", () => {
    expect(productToken(AGENT_DEFAULTS.userAgent)).toBe("ubicrawl");
    expect(productToken("FooBot")).toBe("foobot");
    expect(productToken(" Foo_Bot (+http://bot.test/)")).toBe("foo_bot");
    expect(productToken("ExampleBot/1.1 (https://www.example.com/bot.html)")).toBe("examplebot");
  });

  it("is none when that name is no product token (RFC 9309 §2.2.1): Foo Bar obeys only the * groups", () => {
    for (const userAgent of [
      "Foo Bar",
      "Foo Bar/1.0",
      "bot2/1.0",
      "Foo-Bot_2/1.0",
      "AB42bot",
      "",
      "(compatible)",
      "/1.0",
    ]) {
      expect(productToken(userAgent), userAgent).toBeUndefined();
    }
  });
});
