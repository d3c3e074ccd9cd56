import { describe, expect, it } from "vitest";
import { decodeHtml, extractLinks } from "../../src/parsing/index.js";

const PAGE = "http://example.org/";

function latin1(text: string): Uint8Array {
  return Uint8Array.from(text, (ch) => ch.charCodeAt(0));
}

describe("decodeHtml and byte input", () => {
  it("decodes UTF-8 by default", () => {
    const bytes = new TextEncoder().encode(`<a href="/café">é</a>`);
    expect(extractLinks(bytes, PAGE).links.map((link) => link.url)).toEqual(["http://example.org/caf%C3%A9"]);
  });

  it("does not throw on invalid UTF-8 and keeps the surrounding links", () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode(`<a href="/before">`),
      0xff,
      0xfe,
      0xc3,
      0x28,
      0xe2,
      0x82,
      ...new TextEncoder().encode(`<a href="/bad`),
      0x80,
      ...new TextEncoder().encode(`"><a href="/after">`),
    ]);
    expect(decodeHtml(bytes)).toContain("\ufffd");
    expect(extractLinks(bytes, PAGE).links.map((link) => link.url)).toEqual([
      "http://example.org/before",
      "http://example.org/bad%EF%BF%BD",
      "http://example.org/after",
    ]);
  });

  it("honours <meta charset> for encodings TextDecoder knows", () => {
    const bytes = latin1(`<meta charset="windows-1252"><a href="/caf\u00e9">\u0093quoted\u0094</a>`);
    expect(decodeHtml(bytes)).toContain("\u201cquoted\u201d");
    expect(extractLinks(bytes, PAGE).links[0]?.url).toBe("http://example.org/caf%C3%A9");
    const httpEquiv = latin1(
      `<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">\u00e9`,
    );
    expect(decodeHtml(httpEquiv)).toBe(
      `<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">é`,
    );
  });

  it("falls back to UTF-8 for unknown or self-declared UTF-16 charsets", () => {
    const unknown = new TextEncoder().encode(`<meta charset="no-such-charset">é`);
    expect(decodeHtml(unknown)).toBe(`<meta charset="no-such-charset">é`);
    const utf16 = new TextEncoder().encode(`<meta charset="utf-16">é`);
    expect(decodeHtml(utf16)).toBe(`<meta charset="utf-16">é`);
  });

  it("lets a BOM override everything, and the transport charset override the meta tag", () => {
    const utf16le = Buffer.from(`\ufeff<a href="/bom">`, "utf16le");
    expect(decodeHtml(utf16le)).toBe(`<a href="/bom">`);
    const utf8Bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("<p>é")]);
    expect(decodeHtml(utf8Bom, "windows-1252")).toBe("<p>é");
    const meta = latin1(`<meta charset="utf-8">\u00e9`);
    expect(decodeHtml(meta, "iso-8859-1")).toBe(`<meta charset="utf-8">é`);
    expect(
      extractLinks(latin1(`<a href="/\u00e9">`), PAGE, { transportCharset: "latin1" }).links[0]?.url,
    ).toBe("http://example.org/%C3%A9");
  });
});
