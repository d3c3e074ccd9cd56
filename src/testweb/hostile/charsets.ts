import { htmlPage } from "./content.js";
import type { HttpHostileHost } from "./hostile-host.js";

/** One page of the charsets host: its bytes, its Content-Type, and the link a correct decoder finds. */
export interface CharsetPage {
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
  /** The path (percent-encoded UTF-8, as WHATWG URL parsing gives it) of the one non-ASCII link. */
  readonly expectedLink: string;
}

function page(title: string, hrefBytes: Buffer, head = ""): Buffer {
  return Buffer.concat([
    Buffer.from(`<!doctype html><html><head>${head}<title>${title}</title></head><body><a href="`),
    hrefBytes,
    Buffer.from(`">link</a><p>some text</p></body></html>\n`),
  ]);
}

/** The pages with odd encodings, each linking to one `/ok/…` URL with non-ASCII characters. */
export const CHARSET_PAGES: readonly CharsetPage[] = [
  {
    path: "/invalid-utf8",
    contentType: "text/html; charset=utf-8",
    // 0xFF and a truncated sequence are not UTF-8: each becomes U+FFFD.
    body: page("invalid utf-8", Buffer.from([0x2f, 0x6f, 0x6b, 0x2f, 0x61, 0xff, 0x62])),
    expectedLink: "/ok/a%EF%BF%BDb",
  },
  {
    path: "/windows-1252",
    contentType: "text/html; charset=windows-1252",
    body: page("windows-1252", Buffer.from("/ok/caf\xe9-\x80uro", "latin1")),
    expectedLink: "/ok/caf%C3%A9-%E2%82%ACuro",
  },
  {
    path: "/shift-jis",
    contentType: "text/html; charset=shift_jis",
    // 日本 in Shift_JIS.
    body: page("shift_jis", Buffer.from([0x2f, 0x6f, 0x6b, 0x2f, 0x93, 0xfa, 0x96, 0x7b])),
    expectedLink: "/ok/%E6%97%A5%E6%9C%AC",
  },
  {
    path: "/bogus-charset",
    contentType: "text/html; charset=x-no-such-charset",
    // An unknown label is ignored: the bytes are read as UTF-8.
    body: page("bogus charset", Buffer.from("/ok/\u00fcber", "utf8")),
    expectedLink: "/ok/%C3%BCber",
  },
  {
    path: "/meta-only",
    contentType: "text/html",
    body: page("meta charset", Buffer.from("/ok/na\xefve", "latin1"), '<meta charset="windows-1252">'),
    expectedLink: "/ok/na%C3%AFve",
  },
];

const BY_PATH = new Map(CHARSET_PAGES.map((entry) => [entry.path, entry]));

/** Invalid UTF-8 and odd charsets: windows-1252, shift_jis, a bogus label, a `<meta>`-only charset. */
export const charsetsHost: HttpHostileHost = {
  kind: "http",
  label: "charsets",
  description: "invalid UTF-8, windows-1252, shift_jis, a bogus charset: decoded, non-ASCII links followed",
  entryPaths: ["/"],
  handle(req, res) {
    const path = req.url ?? "/";
    if (path === "/") {
      const links = CHARSET_PAGES.map((entry) => entry.path);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(htmlPage("charsets", links));
      return;
    }
    const entry = BY_PATH.get(path);
    if (entry !== undefined) {
      res.writeHead(200, { "content-type": entry.contentType, "content-length": entry.body.length });
      res.end(entry.body);
      return;
    }
    if (path.startsWith("/ok/")) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(htmlPage("reached", []));
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not here\n");
  },
};
