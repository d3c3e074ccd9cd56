import { type Token, type TokenHandler, Tokenizer, TokenizerMode } from "parse5";
import { describe, expect, it } from "vitest";
import { LinkTokenizer } from "../../src/parsing/link-tokenizer.js";

type Mode = (typeof TokenizerMode)[keyof typeof TokenizerMode];

// The text states the tree builder (and the link scanner) switch into after these start tags.
const TEXT_MODES: Record<string, Mode> = {
  script: TokenizerMode.SCRIPT_DATA,
  style: TokenizerMode.RAWTEXT,
  xmp: TokenizerMode.RAWTEXT,
  iframe: TokenizerMode.RAWTEXT,
  noembed: TokenizerMode.RAWTEXT,
  noframes: TokenizerMode.RAWTEXT,
  title: TokenizerMode.RCDATA,
  textarea: TokenizerMode.RCDATA,
  plaintext: TokenizerMode.PLAINTEXT,
};

/** Records every tag token (name, attributes, self-closing) and switches text states like the scanner. */
class TagRecorder implements TokenHandler {
  readonly tags: string[] = [];
  tokenizer: Tokenizer | undefined;

  onStartTag(token: Token.TagToken): void {
    this.tags.push(`<${token.tagName} ${JSON.stringify(token.attrs)}${token.selfClosing ? " /" : ""}>`);
    const mode = TEXT_MODES[token.tagName];
    if (mode !== undefined && this.tokenizer) this.tokenizer.state = mode;
  }
  onEndTag(token: Token.TagToken): void {
    this.tags.push(`</${token.tagName}>`);
  }
  onComment(): void {}
  onDoctype(): void {}
  onEof(): void {
    this.tags.push("EOF");
  }
  onCharacter(): void {}
  onNullCharacter(): void {}
  onWhitespaceCharacter(): void {}
}

function tags(TokenizerClass: typeof Tokenizer, html: string): string[] {
  const recorder = new TagRecorder();
  const tokenizer = new TokenizerClass({ sourceCodeLocationInfo: false }, recorder);
  recorder.tokenizer = tokenizer;
  tokenizer.write(html, true);
  return recorder.tags;
}

function expectSameTags(html: string): void {
  expect(tags(LinkTokenizer, html), JSON.stringify(html)).toEqual(tags(Tokenizer, html));
}

const TRICKY = [
  `<p>text &amp; more <a href="/x?a=1&amp;b=2&lt">link</a> tail`,
  `<!-- <a href="/in-comment"> --> <a href="/after">`,
  `<!--> <a href="/a1"> <!---> <a href="/a2"> <!-- x --!> <a href="/a3">`,
  `<!-- a - b -- c <!-- d --> <a href=/after-dashes>`,
  `<script>var s = "<a href='/no'>"; if (a<b) {}</script><a href="/yes">`,
  `<script><!-- document.write("<script>x</script>"); --></script><a href="/after-escape">`,
  `<script><!--<script>-->`,
  `<style>a { content: "</a>" }</style  ><a href="/after-style">`,
  `<title>A <a href="/no"> title</title ><a href="/after-title">`,
  `<textarea>&lt;a href="/no"&gt; <a href="/no2"></textarea><a href="/after-area">`,
  `<iframe src="/frame"><a href="/no"></iframe><a href="/after-iframe">`,
  `<plaintext><a href="/never"></plaintext>`,
  `a < b <a href="/lt-space"> c <3 <a\thref="/tab">`,
  `</ a href="/bogus-end"> </3> <a href="/ok">`,
  `<![CDATA[ <a href="/cdata"> ]]> <?xml <a href="/pi"> ?> <!DOCTYPE html><a href="/x">`,
  `<a href="/crlf\r\nvalue" rel="no\rfollow">\r\n<a\r\nhref="/next">`,
  `<a href="/emoji-\u{1F600}">\u{1F600}\u{1F600} text \ud800 lone <a href="/after-lone">`,
  `\u0000<a href="/nul\u0000value">\u0000 text <a\u0000 href="/x">`,
  `<a href="/unterminated`,
  `<a href="/unterminated-tag" `,
  `text only, no tags at all`,
  `<!-- unterminated comment <a href="/x">`,
  `<script>unterminated <a href="/x">`,
  `<META NAME="robots" CONTENT="nofollow"><BASE HREF="/b/"><A HREF=unquoted>`,
  // Runs of names and quoted values taken in one slice, and what ends them.
  `<DiV data-x1-Y2="a'b" cLaSs='c"d'><a hr\u0000ef="/n\u0000ul" re<l='x'>`,
  `<a href="/v\u{1F600}al&amp;ue\ud800lone" title='&lt;&#x41;\r\nz'></a\u0000b-c><h1-x2 a-b9 =c>`,
  `<a href="/open-value`,
  `<a href='/open-single`,
  `<tag-name-at-the-end`,
  `<a attr-name-at-the-end`,
];

describe("LinkTokenizer", () => {
  it("emits exactly the tag tokens of parse5's Tokenizer on tricky markup", () => {
    for (const html of TRICKY) expectSameTags(html);
  });

  it("emits exactly the tag tokens of parse5's Tokenizer on generated markup", () => {
    // Fragments chosen to hit every state the skipping touches, glued at random (a fixed LCG, so the
    // corpus is the same on every run).
    const parts = [
      "<a href='/q'>",
      '<a href="/d?x=1&amp;y">',
      "<area href=/u>",
      "</a>",
      "<p>",
      "text ",
      "&amp;",
      "&",
      "<",
      ">",
      "-",
      "--",
      "<!--",
      "-->",
      "--!>",
      "<!",
      "</",
      "<script>",
      "</script>",
      "<style>",
      "</style>",
      "<title>",
      "</title>",
      "<textarea>",
      "</textarea>",
      "<iframe src=/f>",
      "</iframe>",
      "\r\n",
      "\r",
      "\n",
      "\u0000",
      "\u{1F600}",
      "\ud800",
      '"',
      "'",
      "=",
      " ",
      "<meta name=robots content=noindex>",
      "<DIV Class-1=",
      "<a data-x9='",
      '<h2 title="',
      "a-b1",
      "Xy",
    ];
    let state = 12345;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    for (let doc = 0; doc < 2000; doc++) {
      let html = "";
      const length = 1 + next(40);
      for (let i = 0; i < length; i++) html += parts[next(parts.length)];
      expectSameTags(html);
    }
  });

  it("finds the links of a long page whose input is dropped in chunks as it goes", () => {
    // Past 64 KiB the preprocessor drops consumed input: the skipping must keep positions right.
    const paragraph = `<p>${"lorem ipsum dolor sit amet ".repeat(40)}</p>`;
    let html = "";
    for (let i = 0; i < 300; i++) html += `${paragraph}<a href="/p${i}">p${i}</a><!-- ${"c".repeat(50)} -->`;
    expect(html.length).toBeGreaterThan(300_000);
    const found = tags(LinkTokenizer, html).filter((tag) => tag.startsWith("<a "));
    expect(found).toHaveLength(300);
    expect(found[299]).toContain("/p299");
    expectSameTags(html);
  });
});
