/**
 * parse5's tokenizer without the per-character work on text that link extraction never reads. In the
 * text states (data, RCDATA, RAWTEXT, script data, PLAINTEXT) and inside comments, only a few characters
 * can change the state; every other character would merely be appended to a character or comment token,
 * one state-machine step each. Here the tokenizer jumps straight to the next character that matters, so
 * tags, attributes and state changes are still parse5's own, while text costs one `indexOf`.
 *
 * Inside tags, the same holds for the runs of plain characters in quoted attribute values, tag names and
 * attribute names: they are appended as one slice, where parse5 takes one state-machine step (and, for
 * names, one string concatenation) per character. On the test web's pages that is half of the
 * characters the state machine still read after the text skipping.
 *
 * Character and comment tokens therefore come out incomplete: a handler must not read them. And the start
 * and end tag tokens are two objects reused from tag to tag (parse5 allocates a token and an attribute
 * array per tag: ~14 of the ~64 KiB that link extraction allocated per test-web page): a handler reads a
 * tag token, attributes included, during its callback and keeps none of it.
 */

import { html, Token, Tokenizer } from "parse5";

const LESS_THAN = 0x3c;
const HYPHEN = 0x2d;
const NUL = 0x00;
const EOF = -1;
const QUOTATION_MARK = 0x22;
const APOSTROPHE = 0x27;
const AMPERSAND = 0x26;
const CARRIAGE_RETURN = 0x0d;
const LINE_FEED = 0x0a;

/**
 * True for the characters a name state appends unchanged: ASCII lower-case letters, digits and `-`.
 * Upper-case letters (lowered one by one), whitespace, `/`, `>`, `=`, quotes, `<` and NUL are parse5's.
 */
function isPlainNameChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === HYPHEN;
}

/**
 * A tokenizer for handlers that only read start tags (and end tags) during their callbacks: text and
 * comment data are skipped, tag tokens are reused.
 */
export class LinkTokenizer extends Tokenizer {
  private readonly startTag = newTagToken(Token.TokenType.START_TAG);
  private readonly endTag = newTagToken(Token.TokenType.END_TAG);

  protected override _createStartTagToken(): void {
    this._flushRun("");
    this.currentToken = resetTagToken(this.startTag, this.getCurrentLocation(1));
  }

  protected override _createEndTagToken(): void {
    this._flushRun("");
    this.currentToken = resetTagToken(this.endTag, this.getCurrentLocation(2));
  }

  protected override _stateData(cp: number): void {
    // `&` is plain text here too: a character reference in text can only yield text.
    if (cp === LESS_THAN || cp === EOF) super._stateData(cp);
    else this.skipToTagOpen();
  }

  protected override _stateRcdata(cp: number): void {
    if (cp === LESS_THAN || cp === EOF) super._stateRcdata(cp);
    else this.skipToTagOpen();
  }

  protected override _stateRawtext(cp: number): void {
    if (cp === LESS_THAN || cp === EOF) super._stateRawtext(cp);
    else this.skipToTagOpen();
  }

  protected override _stateScriptData(cp: number): void {
    if (cp === LESS_THAN || cp === EOF) super._stateScriptData(cp);
    else this.skipToTagOpen();
  }

  protected override _statePlaintext(cp: number): void {
    if (cp === EOF) super._statePlaintext(cp);
    else this.preprocessor.pos = this.preprocessor.html.length - 1;
  }

  protected override _stateComment(cp: number): void {
    if (cp === LESS_THAN || cp === HYPHEN || cp === NUL || cp === EOF) {
      super._stateComment(cp);
      return;
    }
    // A comment ends only at `-`; `<` and NUL are kept for parse5 to handle as it does.
    const { html, pos } = this.preprocessor;
    let next = pos + 1;
    for (; next < html.length; next++) {
      const code = html.charCodeAt(next);
      if (code === HYPHEN || code === LESS_THAN || code === NUL) break;
    }
    this.preprocessor.pos = next - 1;
  }

  // A plain character leaves each of these states as it is (parse5 only appends it), so the characters
  // after it can be taken in one go.
  protected override _stateTagName(cp: number): void {
    super._stateTagName(cp);
    if (isPlainNameChar(cp)) (this.currentToken as Token.TagToken).tagName += this.takeNameRun();
  }

  protected override _stateAttributeName(cp: number): void {
    super._stateAttributeName(cp);
    if (isPlainNameChar(cp)) this.currentAttr.name += this.takeNameRun();
  }

  protected override _stateAttributeValueDoubleQuoted(cp: number): void {
    super._stateAttributeValueDoubleQuoted(cp);
    if (isPlainValueChar(cp, QUOTATION_MARK)) this.extendValueRun(QUOTATION_MARK);
  }

  protected override _stateAttributeValueSingleQuoted(cp: number): void {
    super._stateAttributeValueSingleQuoted(cp);
    if (isPlainValueChar(cp, APOSTROPHE)) this.extendValueRun(APOSTROPHE);
  }

  /**
   * Consumes the plain name characters after the current one and returns them. The current character
   * was plain too, so no line break, surrogate or CR/LF bookkeeping lies before or in the run.
   */
  private takeNameRun(): string {
    const preprocessor = this.preprocessor;
    const { html, pos } = preprocessor;
    let next = pos + 1;
    while (next < html.length && isPlainNameChar(html.charCodeAt(next))) next++;
    preprocessor.pos = next - 1;
    return html.slice(pos + 1, next);
  }

  /**
   * Extends the pending run of the attribute value (`runEnd`, which parse5's `_extendRun` just moved past
   * the current character) up to the next closing quote, `&`, NUL or line break. Those are left to parse5;
   * everything else, surrogates included, is appended as it stands in the input, as parse5 does.
   */
  private extendValueRun(quote: number): void {
    const preprocessor = this.preprocessor;
    const html = preprocessor.html;
    let next = preprocessor.pos + 1;
    for (; next < html.length; next++) {
      const code = html.charCodeAt(next);
      if (
        code === quote ||
        code === AMPERSAND ||
        code === NUL ||
        code === CARRIAGE_RETURN ||
        code === LINE_FEED
      ) {
        break;
      }
    }
    preprocessor.pos = next - 1;
    this.runEnd = next;
  }

  /**
   * Moves the input to just before the next `<` (or its end), dropping the characters between. The
   * preprocessor's CR/LF and surrogate bookkeeping only matters for characters that are read, and the
   * next one read is `<` or the end of the input.
   */
  private skipToTagOpen(): void {
    const preprocessor = this.preprocessor;
    const next = preprocessor.html.indexOf("<", preprocessor.pos + 1);
    preprocessor.pos = (next === -1 ? preprocessor.html.length : next) - 1;
  }
}

/**
 * True when `cp`, read in a quoted attribute value closed by `quote`, was appended to the value's run
 * as it stands in the input (the preprocessor reads a CR as LF, which parse5 appends as a new run).
 */
function isPlainValueChar(cp: number, quote: number): boolean {
  return cp !== quote && cp !== AMPERSAND && cp !== NUL && cp !== EOF && cp !== LINE_FEED;
}

function newTagToken(type: Token.TagToken["type"]): Token.TagToken {
  return {
    type,
    tagName: "",
    tagID: html.TAG_ID.UNKNOWN,
    selfClosing: false,
    ackSelfClosing: false,
    attrs: [],
    location: null,
  };
}

/** `token` as parse5 creates a fresh one: no name, no attributes. */
function resetTagToken(token: Token.TagToken, location: Token.Location | null): Token.TagToken {
  token.tagName = "";
  token.tagID = html.TAG_ID.UNKNOWN;
  token.selfClosing = false;
  token.ackSelfClosing = false;
  // A new array rather than `length = 0`, which V8 runs as a slow runtime call.
  if (token.attrs.length > 0) token.attrs = [];
  token.location = location;
  return token;
}
