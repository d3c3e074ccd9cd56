import { describe, expect, it } from "vitest";
import { ErrorCode, isUbiError } from "../../src/errors.js";
import { extractLinks } from "../../src/parsing/index.js";
import { rejectionOf, useHostileWeb } from "./helpers.js";

/** Servers that lie about lengths, reset, speak HTTP/1.0 or break HTTP altogether. */

const fixture = useHostileWeb();

describe("lying lengths and resets", () => {
  it("a Content-Length shorter than the body: the declared bytes are read, the rest ignored", async () => {
    const result = await fixture.fetcher().fetch(fixture.web.url("short-length", "/"));
    expect(result.status).toBe(200);
    expect(result.body.length).toBe(64);
    expect(result.truncated).toBe(false);
    // A second request still works: the extra bytes did not poison a reused connection.
    const again = await fixture.fetcher().fetch(fixture.web.url("short-length", "/"));
    expect(again.body.equals(result.body)).toBe(true);
  });

  it("a Content-Length longer than the body, then close: ProtocolError", async () => {
    const error = await rejectionOf(fixture.fetcher().fetch(fixture.web.url("long-length", "/")));
    expect(isUbiError(error, ErrorCode.ProtocolError), String(error)).toBe(true);
  });

  it("a reset in the middle of the body: ProtocolError", async () => {
    const error = await rejectionOf(fixture.fetcher().fetch(fixture.web.url("reset-mid-body", "/")));
    expect(isUbiError(error, ErrorCode.ProtocolError), String(error)).toBe(true);
  });
});

describe("HTTP/1.0 without a length", () => {
  it("reads the body to the close and finds its links", async () => {
    const { web } = fixture;
    const fetcher = fixture.fetcher();
    const home = await fetcher.fetch(web.url("http10", "/"));
    expect(home.status).toBe(200);
    expect(home.body.toString()).toContain("</html>");
    const links = extractLinks(home.body, home.url).links.map((link) => link.url);
    expect(links).toEqual([web.url("http10", "/second")]);
    const second = await fetcher.fetch(web.url("http10", "/second"));
    expect(second.status).toBe(200);
    expect(second.body.toString()).toContain("HTTP/1.0 second page");
  });
});

describe("malformed status lines and headers", () => {
  it("every malformed answer is a ProtocolError, and the next fetch to the host still works", async () => {
    const { web } = fixture;
    const fetcher = fixture.fetcher();
    const urls = web.host("malformed").entryUrls;
    expect(urls.length).toBeGreaterThanOrEqual(7);
    for (const url of urls) {
      const error = await rejectionOf(fetcher.fetch(url));
      expect(isUbiError(error, ErrorCode.ProtocolError), `${url}: ${String(error)}`).toBe(true);
    }
    const notFound = await fetcher.fetch(web.url("malformed", "/robots.txt"));
    expect(notFound.status).toBe(404);
  });
});
